// Package records is what the runtime's records are outside a step, without Beam: the five
// output kinds, the typed record files and their framing. The shells (drive, transforms,
// pipeline, replay), the readers (console, effector) and the command line take every kind and
// every frame from here.
//
//   - Output kinds (Kinds, KindOf, KindOfType, KindOfCode): one table giving each output its
//     tag on a step's one output stream (OutIntent … OutDeadLetter), the stem of its files
//     (IntentsName …), the `run` flag naming its topic, its records' message type, its noun in
//     messages and the byte naming it in the console's store; Set is a typed set of
//     outputs, one value per kind (a step's output collections, their topics).
//   - Typed record files (Header, Split, ReadHeader, Check, Records, Sniff, CheckJSON): a
//     length-delimited binary file opens with the five bytes FF FF FF FF 0F, then
//     "beamagents " and the full message name (beam_agents.v1.ToolIntent …), then a newline.
//     Read as a frame length, the five bytes announce 2^32-1 bytes, far past any record bound,
//     so no unheadered record file begins with them: a file without the header is an older
//     one, whose type the reader takes from its flag or its name (NamedType). The format is
//     stated in docs/files.md in this repository.
//   - Framing: each record is a uvarint length and that many bytes (AppendFrame). A whole
//     file is split by Frames; a file still being written by SplitFrames, which leaves a frame
//     cut off at the end for the next read; a file too large to hold is streamed by
//     ReadFrames, one record at a time.
//   - Dead letters: the record of a failure (DeadLetter), the input it carries (WithEnvelope,
//     WithRawRecord), and its reason, one of the closed vocabulary Reasons (Reason…
//     constants; host.DeadLetter takes it from an *agent.Error).
//   - Whole files: ReadCapped, WriteAtomic, TempName.
//
// # Invariants
//
//   - One table: no other package spells an output's tag, file stem, topic flag, message type
//     or store code; the order of Kinds is the order of every output listing (drive.Emit, the
//     files, the topics, the Beam outputs). Tags, stems, topic flags and store codes never
//     change (the files, the command line and the console's store depend on them).
//   - Header(t) parsed by Split gives t back, and the bytes after it unchanged; ReadHeader
//     agrees with Split on every input and leaves the reader at the first record.
//   - A reader given a file whose header names another type refuses it with CodeWrongType,
//     naming both types; an unheadered file is read as the type the reader expects. A JSON
//     Lines file is checked by the shape of its first record: a record that is not of the
//     expected type but decodes strictly as another type of the tool's files is refused the
//     same way.
//   - Framing is read one way: Frames, SplitFrames and ReadFrames cut the same records from
//     the same bytes; Frames and ReadFrames refuse (CodeFraming, naming the byte) exactly
//     where SplitFrames, short of a frame over its bound, stops before the end; AppendFrame's
//     frames read back whole.
//   - Nothing here holds more than it is given: ReadCapped never holds more than its cap plus
//     one byte of a file (a device such as /dev/zero included); SplitFrames and ReadFrames never
//     take a frame over their bound (MaxFrameBytes, ReadFrames' max).
//   - A dead letter's bytes depend only on its inputs: its detail is valid UTF-8 with no
//     no-break space, whatever the text it was given.
//   - Errors are *Error values with a stable Code (match them with errors.Is against
//     ErrWrongType, ErrHeader, ErrFraming, ErrTooLarge, never on text).
//   - The package links no Apache Beam and keeps no state: everything is safe for concurrent
//     use.
package records
