// Package outfiles names, lists and removes the files a run writes into an output folder,
// through Beam's file systems (a local path, or gs:// and the other registered schemes),
// reads the head of an input file the same way, and reads a typed record file (a run's
// .binpb output) as messages.
//
// Invariants:
//   - An output named NAME is NAME.binpb and NAME.jsonl, their shards NAME-….binpb and
//     NAME-….jsonl, and the temporary files of an unfinished write (.NAME….partial): Globs
//     matches exactly those, so a folder's other files are never listed nor removed.
//   - Listed names are relative to the folder, sorted, without duplicates.
package outfiles
