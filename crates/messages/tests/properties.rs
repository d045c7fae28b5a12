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
