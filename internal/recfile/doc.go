// Package recfile is the typed record file: the length-delimited binary files the tool writes
// (NAME.binpb outputs and shards, results, redriven envelopes, signed intents) open with a
// header naming the message type of their records, and every reader checks it.
//
// Format (docs/files.md): the header is the five bytes FF FF FF FF 0F, then
// "beamagents " and the full message name (beam_agents.v1.ToolIntent …), then a newline;
// the records follow, each a uvarint length and that many bytes. Read as a frame length, the
// five bytes announce 2^32-1 bytes, far past any record bound, so no unheadered record file
// begins with them: a file without the header is an older one, whose type the reader takes
// from its flag.
//
// Invariants:
//   - Header(t) parsed by Split gives t back, and the bytes after it unchanged.
//   - A reader given a file whose header names another type refuses it with CodeWrongType,
//     naming both types; an unheadered file is read as the type the reader expects.
//   - A JSON Lines file is checked by the shape of its first record: a record that is not of
//     the expected type but decodes strictly as another type of the tool's files is refused
//     the same way.
//   - ReadCapped never holds more than its cap plus one byte of a file, whatever the file
//     (a device such as /dev/zero included).
package recfile
