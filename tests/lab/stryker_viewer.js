// Opens every mutant of the report `REPORT` in Stryker's viewer
// (<mutation-test-report-app>, mutation-testing-elements 3.x), one after
// the other, as a reader clicking its mark would, and writes what happened
// into #result for a DOM dump: data-opened, the ids of the mutants whose
// mutated lines showed; data-errors, every error the page raised, each
// after the id of the mutant being opened; data-done once it is over.
const errors = [];
let current = "page";
window.addEventListener("error", (event) => errors.push(`${current}: ${event.message}`));
window.addEventListener("unhandledrejection", (event) =>
  errors.push(`${current}: ${event.reason}`),
);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The elements matching `selector` under `root` and every shadow root in it. */
function deep(root, selector) {
  const found = [...root.querySelectorAll(selector)];
  for (const element of root.querySelectorAll("*")) {
    if (element.shadowRoot) found.push(...deep(element.shadowRoot, selector));
  }
  return found;
}

/** The viewer's path to the report's one file: the names of the results
 * from the root down to the file (it joins folders with one child). */
function pathToFile(result) {
  const names = [];
  while (result && !result.file) {
    result = result.childResults[0];
    names.push(result.name);
  }
  return names;
}

const [file] = Object.keys(REPORT.files);
// The page's own viewer when it has one (lab's stryker-html page), else one
// made here.
const app =
  document.querySelector("mutation-test-report-app") ??
  document.createElement("mutation-test-report-app");
if (!app.isConnected) {
  app.report = REPORT;
  document.body.append(app);
}

async function openEach() {
  await app.updateComplete;
  const path = pathToFile(app.rootModel.systemUnderTestMetrics);
  location.hash = "#mutant/" + path.map(encodeURIComponent).join("/");
  let view;
  for (let tries = 0; tries < 400 && !view; tries++) {
    await sleep(50);
    view = deep(document, "mte-file").find((element) =>
      element.shadowRoot?.querySelector("mte-state-filter"),
    );
  }
  if (!view) throw new Error(`the file view of ${path.join("/")} did not show`);
  // Show the mutants of every status: by default a viewer hides the killed.
  const statuses = ["Killed", "Survived", "NoCoverage", "Ignored", "Timeout", "CompileError", "RuntimeError"];
  view.shadowRoot
    .querySelector("mte-state-filter")
    .dispatchEvent(new CustomEvent("filters-changed", { detail: statuses }));
  await view.updateComplete;
  const opened = [];
  for (const mutant of REPORT.files[file].mutants) {
    current = mutant.id;
    const before = errors.length;
    const mark = view.shadowRoot.querySelector(
      `svg.mutant-dot[data-mutant-id="${CSS.escape(mutant.id)}"]`,
    );
    if (!mark) {
      errors.push(`${mutant.id}: no mark in the file view`);
      continue;
    }
    mark.dispatchEvent(new MouseEvent("click", { bubbles: true, composed: true }));
    await view.updateComplete;
    await sleep(10);
    if (errors.length > before) continue;
    if (view.shadowRoot.querySelectorAll("tr.diff-new").length > 0) opened.push(mutant.id);
    else errors.push(`${mutant.id}: no mutated line shown`);
  }
  return opened;
}

const result = document.getElementById("result");
openEach()
  .then((opened) => {
    result.dataset.opened = JSON.stringify(opened);
  })
  .catch((error) => errors.push(`${current}: ${error}`))
  .finally(() => {
    result.dataset.errors = JSON.stringify(errors);
    result.dataset.done = "yes";
  });
