// Package console is the operator's web console over a run's outputs: the overview
// (activations, model calls, tokens, intents, final replies and dead letters over event
// time, dead letters by reason, the keys suspended and on what), one page per entity key,
// one waterfall per trace, the dead letters grouped by reason with a redrive, the approvals,
// a rehearsal's report (Options.Rehearsal) and a search by entity key, intent id or trace
// id. The rules are in docs/console.md.
//
// Invariants:
//   - Outputs come from a run's output directory (Follower: the sorted and sharded .binpb
//     files, read from where the last read ended) and from output topics (Subscriber), into
//     one bbolt store (Store). Each ingest is one transaction that also records how far its
//     file was read; a Pub/Sub batch is acknowledged only after its commit. A record is named
//     by its content, so the same record from a file and a topic, or read twice, counts once.
//   - A record that does not decode is counted (shown on the overview) and skipped; a file
//     whose framing breaks is skipped from there on; nothing panics. Either is logged once
//     (file, offset, length, code) after the commit that moves the file's offset past it.
//   - No record stops the others. Keys of any length are stored: an entity key, intent id,
//     trace id or reason over MaxKeyBytes is filed under a fixed-size stored form (its first
//     bytes and its SHA-256) with the whole value kept once. A record over MaxRecordBytes is
//     not read: counted, logged once with its file and offset, and passed by the file's
//     offset. A file that fails is logged and the others are read.
//   - Reading needs no identity unless ReadNeedsIdentity (a console beyond loopback). Acting
//     (an approval decision, a redrive) needs the approver's identity from exactly one
//     source (a proxy's header or basic-auth users), a same-origin request (Sec-Fetch-Site
//     and Origin, when the browser sends them) and the page's CSRF token bound to that
//     identity; anything else is refused (401 or 403) and changes nothing. Every action is
//     logged with who took it, and kept in the store.
//   - Every value from the outputs (keys, model text, details, attributes) is escaped by
//     html/template, made valid UTF-8, and cut when long; keys that are not printable UTF-8
//     are shown quoted. Pages run no script but their own (a per-response nonce in the
//     Content-Security-Policy), send forms only to the console and cannot be framed.
//   - A redrive sends exactly the envelopes the chosen dead letters carry (RedriveEnvelope,
//     as `beamagents redrive` does): to a new JSON Lines file (never rewriting one a run may
//     have read) or to the input topic.
package console
