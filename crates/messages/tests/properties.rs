//! Property tests: serde round trips and the invariants of section operators and sharing.

use messages::testing::{invalid_message_json, message, message_store, messages};
use messages::{Message, MessageStore, Messages};
use proptest::prelude::*;

proptest! {
    #[test]
    fn message_json_round_trip_is_stable(m in message()) {
        let first = serde_json::to_string(&m).unwrap();
        let back: Message = serde_json::from_str(&first).unwrap();
        let second = serde_json::to_string(&back).unwrap();
        prop_assert_eq!(&first, &second);
        prop_assert_eq!(back, m);
    }

    #[test]
    fn store_json_round_trip_is_stable(store in message_store()) {
        let first = serde_json::to_string(&store).unwrap();
        let back = MessageStore::from_json(&first).unwrap();
        prop_assert_eq!(serde_json::to_string(&back).unwrap(), first);
        prop_assert_eq!(back, store);
    }

    #[test]
    fn in_place_edits_equal_the_copying_operators_and_leave_clones_alone(
        store in message_store(),
        extra in messages(4),
        op in 0usize..3,
        target in prop_oneof![Just("messages"), Just("execution_buffer"), Just("summary"), Just("other")],
    ) {
        let expected = match op {
            0 => store.section(target).append(extra.clone()),
            1 => store.section(target).set(extra.clone()),
            _ => store.section(target).clear(),
        };
        let before = store.clone();
        let mut edited = store.clone();
        match op {
            0 => edited.section_mut(target).append(extra.clone()),
            1 => edited.section_mut(target).set(extra.clone()),
            _ => edited.section_mut(target).clear(),
        }
        prop_assert_eq!(&edited, &expected);
        prop_assert_eq!(&store, &before, "the store the edited one was cloned from is unchanged");
    }

    #[test]
    fn section_operators_never_touch_other_sections(
        store in message_store(),
        extra in messages(4),
        op in 0usize..4,
        target in prop_oneof![Just("messages"), Just("execution_buffer"), Just("summary"), Just("other")],
    ) {
        let changed = match op {
            0 => store.section(target).append(extra.clone()),
            1 => store.section(target).set(extra.clone()),
            2 => store.section(target).clear(),
            _ => store.section(target).remove(),
        };
        for section in store.sections() {
            if section.name() != target {
                prop_assert_eq!(&changed.section(section.name()).messages(), section.messages());
            }
        }
        prop_assert_eq!(changed.parameters(), store.parameters());
        let expected_len = match op {
            0 => store.section(target).len() + extra.len(),
            1 => extra.len(),
            _ => 0,
        };
        prop_assert_eq!(changed.section(target).len(), expected_len);
    }

    #[test]
    fn appending_to_a_clone_leaves_the_original_unchanged(base in messages(40), extra in messages(40)) {
        let snapshot = base.to_vec();
        let clone = base.clone();
        let longer = clone.extended(extra.iter().cloned());
        prop_assert_eq!(base.to_vec(), snapshot.clone());
        prop_assert_eq!(longer.len(), base.len() + extra.len());
        prop_assert_eq!(longer.head(base.len()).to_vec(), snapshot);
        prop_assert_eq!(longer.tail(extra.len()).to_vec(), extra.to_vec());
    }

    #[test]
    fn invalid_documents_are_errors_not_panics(value in invalid_message_json()) {
        prop_assert!(Message::from_value(&value).is_err());
        prop_assert!(Messages::from_value(&serde_json::Value::Array(vec![value])).is_err());
    }
}

#[test]
fn a_store_nothing_else_shares_is_edited_without_copying_its_sections() {
    let mut store = MessageStore::new()
        .section("messages")
        .set(vec![Message::user("hi")])
        .section("execution_buffer")
        .set(vec![Message::assistant("calling a tool")]);
    let shared = store.clone();
    // Shared with `shared`: the first edit copies the list of sections...
    store
        .section_mut("messages")
        .append(Message::assistant("hello"));
    let list = store.sections().as_ptr();
    assert_ne!(list, shared.sections().as_ptr());
    // ...and later edits of the now unshared store happen in place.
    store.section_mut("execution_buffer").clear();
    store
        .section_mut("messages")
        .append(Message::user("thanks"));
    assert_eq!(store.sections().as_ptr(), list);
    assert_eq!(store.section("messages").len(), 3);
    assert!(store.section("execution_buffer").is_empty());
    assert_eq!(shared.section("messages").len(), 1);
    assert_eq!(shared.section("execution_buffer").len(), 1);
}

proptest! {
    /// `tool_call_ids` stops early on a count the list keeps; whatever way a list was built
    /// (appending, concatenating, filtering, taking a tail or head, reversing), it finds
    /// exactly the ids a walk over every message finds, newest first.
    #[test]
    fn tool_call_ids_equal_a_full_walk_for_every_way_of_building_a_list(
        base in messages(12),
        extra in messages(6),
        op in 0usize..6,
        n in 0usize..12,
    ) {
        let built = match op {
            0 => base.extended(extra.iter().cloned()),
            1 => base.concat(&extra),
            2 => base.filter(|m| m.role() != messages::Role::System),
            3 => base.tail(n),
            4 => base.head(n).appended(Message::user("again")),
            _ => base.reversed(),
        };
        let walked: Vec<String> = built
            .iter()
            .rev()
            .flat_map(|m| m.tool_calls().iter().map(|c| c.id().to_owned()))
            .collect();
        let found: Vec<&str> = built.tool_call_ids().collect();
        prop_assert_eq!(found, walked);
    }
}
