//! The core against the Python engine's answers for the corpus (corpus.json, written by
//! tests/native/core_corpus.py from the Python side): every value the core answers has the
//! kind, label, sizes, cut and text Python gives it alone; a value whose Python view carries a
//! reason the page answer does not is handed back; and the common road is the core's (most
//! values answered).

mod common;

use common::{read_json, seeds, unhex, At};
use cqlsh_ext_core::describe::hash64;
use cqlsh_ext_core::engine::{Kind, Want};
use cqlsh_ext_core::page::{decode_one, text_of};

fn value_of(place: &str) -> Vec<u8> {
    if let Some(path) = place.strip_prefix("seed:") {
        std::fs::read(seeds().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    } else {
        unhex(place.strip_prefix("hex:").expect("seed: or hex:"))
    }
}

#[test]
fn the_corpus_reads_as_the_python_engine_reads_it() {
    let configured = common::configured();
    let doc = read_json(&common::here().join("corpus.json"));
    let entries = At { node: &doc.root, src: &doc.src }.items();
    let want = Want {
        paths: &[],
        tree: false,
        text_tree: true,
        gaps: false,
        text_values: false,
        measure: false,
        json: true,
        needles: &[],
    };
    let (mut answered, mut handed, mut texts, mut differences) = (0usize, 0usize, 0usize, Vec::new());
    for entry in &entries {
        let place = entry.get("value").str();
        let value = value_of(&place);
        let cap = entry.get("cap").usize();
        let short: String = place.chars().take(60).collect();
        let Some(outcome) = decode_one(&configured.config, &value, cap, &want) else {
            handed += 1;
            continue;
        };
        if outcome.kind == Kind::HandedBack {
            handed += 1;
            continue;
        }
        answered += 1;
        if entry.get("hand_back").bool() {
            differences.push(format!("{short} cap {cap}: answered, where Python's view has a reason"));
            continue;
        }
        let got = (outcome.kind as i64, outcome.label.spell(), outcome.stored, outcome.decoded, outcome.cut);
        let expected = (
            entry.get("kind").int(),
            entry.get("label").str(),
            entry.get("stored").usize(),
            entry.get("decoded").usize(),
            entry.get("cut").bool(),
        );
        if got != expected {
            differences.push(format!("{short} cap {cap}: {got:?} != {expected:?}"));
            continue;
        }
        if let Some(length) = entry.find("text_length") {
            let text = text_of(&outcome, &value).unwrap_or("");
            let digest = format!("{:016x}", hash64(text.as_bytes()).swap_bytes());
            texts += 1;
            if text.len() != length.usize() || digest != entry.get("text_digest").str() {
                differences.push(format!("{short} cap {cap}: text of {} bytes {digest}", text.len()));
            }
        }
    }
    assert!(differences.is_empty(), "{} differences:\n{}", differences.len(), differences.join("\n"));
    // the common road is the core's; its texts are compared
    assert!(
        answered >= entries.len() * 3 / 4,
        "{answered} answered, {handed} handed back of {}",
        entries.len()
    );
    assert!(texts >= 100, "{texts} texts compared");
    println!("{answered} values answered ({texts} texts compared), {handed} handed back, 0 differences");
}

#[test]
fn a_container_the_core_lacks_hands_back_the_values_that_reach_it() {
    let mut registry = common::registry();
    registry.zlib_version = cqlsh_ext_core::deflate::version().expect("the system's libz.so.1");
    registry.lz4_version = cqlsh_ext_core::lz4::version();
    registry.zstd_version = cqlsh_ext_core::zstd::version();
    registry.grades.push(("test/xor".to_owned(), "A".to_owned()));
    registry.dispatch[b'X' as usize].insert(0, "test/xor".to_owned());
    registry.records.insert(0, "kryo".to_owned());
    let configured =
        cqlsh_ext_core::registry::configure(&registry).expect("a registry with formats the core lacks");
    assert_eq!(configured.config.lacked, ["kryo", "test/xor"]);
    assert!(configured.hands_back.contains(&"test/xor".to_owned()));
    let want = Want {
        paths: &[],
        tree: false,
        text_tree: true,
        gaps: false,
        text_values: false,
        measure: false,
        json: true,
        needles: &[],
    };
    let cap = 1 << 20;
    // the first byte reaches it: handed back
    assert!(decode_one(&configured.config, b"XOR1 anything at all", cap, &want).is_none());
    // text is read before records are tried: answered; a binary payload reaches the lacked
    // record format first: handed back
    let text = decode_one(&configured.config, br#"{"status": "PAID"}"#, cap, &want).expect("text is read");
    assert_eq!(text.label.spell(), "json");
    let record: &[u8] = &[0x84, 0xa1, 0x61, 0x01, 0xa1, 0x62, 0x02, 0xa1, 0x63, 0x03, 0xa1, 0x64, 0x04];
    assert!(decode_one(&configured.config, record, cap, &want).is_none());
    // without it, the same value is the core's
    let read = decode_one(&common::configured().config, record, cap, &want).expect("a record the core reads");
    assert_eq!(read.label.spell(), "msgpack");
}

#[test]
fn a_json_texts_whitespace_runs_are_noted_only_where_asked() {
    // JSON Lines asks for them (Want.gaps: it writes the text minified from them); CSV, whose
    // file holds the text as it is, and every other reader do not
    let configured = common::configured();
    let text = b"{\"a\": [1, 2],\n  \"b\": \"x y\"}";
    let read = |tree: bool, gaps: bool| {
        let want = Want {
            paths: &[],
            tree,
            text_tree: false,
            gaps,
            text_values: false,
            measure: false,
            json: true,
            needles: &[],
        };
        let outcome = decode_one(&configured.config, text, 1 << 20, &want).expect("read by the core");
        assert_eq!((outcome.kind, outcome.label.spell()), (Kind::Text, "json".to_owned()));
        outcome.gaps
    };
    assert_eq!(read(true, true), Some(vec![5, 6, 9, 10, 13, 16, 20, 21]));
    assert_eq!(read(true, false), None);
    assert_eq!(read(false, true), None); // no file's tree asked: nothing written from the text
}
