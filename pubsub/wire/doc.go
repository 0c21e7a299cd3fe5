// Package wire is what a beamagents Pub/Sub message carries besides its data, shared by the
// pipeline's Pub/Sub input and output and by the effector without linking Apache Beam: the
// attribute names and values, the content-type rule, the ordering key of an entity key and
// the full resource names of subscriptions and topics. The rules are in docs/pubsub.md.
//
// Invariants:
//   - A message's data is protojson exactly when its content-type attribute's media type is
//     application/json (parameters such as charset are ignored); otherwise it is binary.
//   - The ordering key of an entity key is the key itself when it is valid UTF-8 of at most
//     1024 bytes, else "b64:" and its standard base64, cut to 1024 bytes: a function of the
//     key alone, so every publisher orders one key's messages the same way.
//   - A resource name is exactly projects/PROJECT/subscriptions/ID or projects/PROJECT/topics/ID
//     with non-empty parts; anything else is a *NameError.
package wire
