use super::*;
use std::fs::File;
use std::path::Path;

const LEN: u64 = 8 * SECTOR;

/// A database file of eight zero sectors, tracked as durable, and the
/// file open for writing behind the model's back (as SQLite does
/// through the shim, which records each change).
fn tracked_file(dir: &Path) -> (Tracked, File) {
    let db = dir.join("jobs.db");
    std::fs::write(&db, vec![0u8; LEN as usize]).unwrap();
    let tracked = Tracked::new(db.as_os_str().as_bytes());
    let file = OpenOptions::new().read(true).write(true).open(&db).unwrap();
    (tracked, file)
}

fn write(state: &mut DiskState, file: &File, offset: u64, bytes: &[u8]) {
    let mut before = vec![0; bytes.len()];
    file.read_exact_at(&mut before, offset).unwrap();
    file.write_all_at(bytes, offset).unwrap();
    state.record_write(MAIN_DB, offset, bytes.len() as u64, before);
}

fn truncate(state: &mut DiskState, file: &File, len: u64) {
    let mut removed = vec![0; (file.metadata().unwrap().len() - len) as usize];
    file.read_exact_at(&mut removed, len).unwrap();
    file.set_len(len).unwrap();
    state.record_truncate(MAIN_DB, len, removed);
}

#[test]
fn a_cut_reports_where_it_fell_and_how_it_tore() {
    let dir = tempfile::tempdir().unwrap();
    let (tracked, file) = tracked_file(dir.path());
    let mut state = tracked.lock();
    write(&mut state, &file, 0, &[0xaa; 512]);
    let tearing = Tearing::AnySector { seed: 7 };
    let report = tracked.cut(&mut state, Some(CutPoint::AfterWrite(1)), tearing);
    assert_eq!(report.point, Some(CutPoint::AfterWrite(1)));
    assert_eq!(report.tearing, tearing);
    assert_eq!(state.reports(), [report]);
}

/// A truncation records no bytes written: the last *write* is the one
/// a [`Tearing::LastWrite`] cut tears, even when a truncation came after
/// it. Over a few seeds the coins keep some of its four sectors; were
/// the truncation taken for the last write, the write would always be
/// lost whole.
#[test]
fn the_last_write_torn_is_the_last_change_that_wrote() {
    let mut reached = 0;
    for seed in 0..8 {
        let dir = tempfile::tempdir().unwrap();
        let (tracked, file) = tracked_file(dir.path());
        let mut state = tracked.lock();
        write(&mut state, &file, 0, &[0xaa; 4 * SECTOR as usize]);
        truncate(&mut state, &file, 6 * SECTOR);
        let report = tracked.cut(&mut state, None, Tearing::LastWrite { seed });
        assert_eq!(report.truncations_undone, 1);
        assert_eq!(
            file.metadata().unwrap().len(),
            LEN,
            "the truncation is undone"
        );
        assert_eq!(
            report.writes_lost + report.writes_kept + report.writes_torn,
            1
        );
        reached += report.writes_kept + report.writes_torn;
    }
    assert!(
        reached > 0,
        "no seed let a sector of the last write reach the disk"
    );
}

#[test]
fn only_the_last_write_is_torn_and_every_earlier_one_is_lost_whole() {
    for seed in 0..8 {
        let dir = tempfile::tempdir().unwrap();
        let (tracked, file) = tracked_file(dir.path());
        let mut state = tracked.lock();
        write(&mut state, &file, 0, &[0xaa; 4 * SECTOR as usize]);
        write(&mut state, &file, 4 * SECTOR, &[0xbb; 4 * SECTOR as usize]);
        let report = tracked.cut(&mut state, None, Tearing::LastWrite { seed });
        assert_eq!(
            report.writes_lost + report.writes_kept + report.writes_torn,
            2
        );
        assert_eq!(report.truncations_undone, 0, "writes are no truncations");
        assert!(report.writes_lost >= 1, "seed {seed}: {report:?}");
        let mut first = vec![1; 4 * SECTOR as usize];
        file.read_exact_at(&mut first, 0).unwrap();
        assert!(
            first.iter().all(|&byte| byte == 0),
            "seed {seed}: the first write is lost whole"
        );
    }
}

#[test]
fn a_deleted_file_made_again_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("jobs.db");
    let wal = dir.path().join("jobs.db-wal");
    std::fs::write(&wal, vec![0u8; 2 * SECTOR as usize]).unwrap();
    let tracked = Tracked::new(db.as_os_str().as_bytes());
    let mut state = tracked.lock();
    let old = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&wal)
        .unwrap();
    let mut before = vec![0; SECTOR as usize];
    old.read_exact_at(&mut before, 0).unwrap();
    old.write_all_at(&[0xaa; SECTOR as usize], 0).unwrap();
    state.record_write(1, 0, SECTOR, before);
    std::fs::remove_file(&wal).unwrap();
    state.deleted(1);
    let new = File::create(&wal).unwrap();
    new.write_all_at(&[0xbb; SECTOR as usize], 0).unwrap();
    state.record_write(1, 0, SECTOR, Vec::new());
    let report = tracked.cut(&mut state, None, Tearing::None);
    assert_eq!((report.writes_lost, report.error), (1, None));
    assert_eq!(
        std::fs::metadata(&wal).unwrap().len(),
        0,
        "nothing of it was synced"
    );
}

#[test]
fn an_armed_cut_falls_at_its_own_point_only_once() {
    let dir = tempfile::tempdir().unwrap();
    let (tracked, _file) = tracked_file(dir.path());
    let mut state = tracked.lock();
    let tearing = Tearing::LastWrite { seed: 3 };
    state.arm_cut(CutPoint::AfterWrite(2), tearing);
    assert_eq!(state.take_cut(CutPoint::AfterWrite(1)), None);
    assert_eq!(state.take_cut(CutPoint::BeforeSync(2)), None);
    assert_eq!(state.take_cut(CutPoint::AfterWrite(2)), Some(tearing));
    assert_eq!(
        state.take_cut(CutPoint::AfterWrite(2)),
        None,
        "disarmed once fallen"
    );
}

#[test]
fn a_file_gone_since_is_nothing_to_restore_but_one_that_cannot_be_opened_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (tracked, file) = tracked_file(dir.path());
    let mut state = tracked.lock();
    write(&mut state, &file, 0, &[0xaa; 16]);
    let db = dir.path().join("jobs.db");
    std::fs::remove_file(&db).unwrap();
    let report = tracked.cut(&mut state, None, Tearing::None);
    assert_eq!(
        report.error, None,
        "a file that is gone has nothing to put back"
    );

    write(&mut state, &file, 0, &[0xaa; 16]);
    std::fs::create_dir(&db).unwrap();
    let report = tracked.cut(&mut state, None, Tearing::None);
    let error = report
        .error
        .expect("a folder where the file was cannot be restored");
    assert!(error.starts_with(&db.display().to_string()), "{error}");
}

#[test]
fn the_tearing_coin_is_fair_for_any_seed_and_file() {
    for seed in [0, 1, 42, u64::MAX] {
        for role in 0..SUFFIXES.len() {
            let heads = (0..256).filter(|&sector| coin(seed, role, sector)).count();
            assert!(
                (80..=176).contains(&heads),
                "seed {seed}, file {role}: {heads} of 256 sectors kept"
            );
        }
    }
}

/// The coin is splitmix64's finalizer, bit 0: these masks (sector n is
/// bit n) come from an implementation of it outside this crate.
#[test]
fn the_tearing_coin_is_splitmix64() {
    let expected = [
        (
            0,
            [
                0xb36b_d1fd_8663_eaaa,
                0x0632_065f_7cb2_b3f6,
                0x2389_3de8_8e02_469a,
            ],
        ),
        (
            42,
            [
                0x0e64_638c_7f8e_95aa,
                0xc539_2384_d700_8c0f,
                0xa294_652e_5aa0_2800,
            ],
        ),
        (
            u64::MAX,
            [
                0xb672_3a79_60ce_8515,
                0xcb9d_33bd_516a_2f8b,
                0xd68f_6e17_6e7e_b728,
            ],
        ),
    ];
    for (seed, masks) in expected {
        for (role, mask) in masks.into_iter().enumerate() {
            let coins = (0..64).fold(0u64, |bits, sector| {
                bits | (u64::from(coin(seed, role, sector)) << sector)
            });
            assert_eq!(coins, mask, "seed {seed}, file {role}: {coins:#x}");
        }
    }
}
