package records

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

const (
	marker = "\xff\xff\xff\xff\x0f"
	prefix = marker + "beamagents "
	// maxHeaderBytes bounds a header: the marker, the word and a message name.
	maxHeaderBytes = 512
)

// MaxFileBytes caps a record file read whole into memory (replay, redrive, the effector).
const MaxFileBytes = 1 << 30

// Header is the header of a file of records of type t.
func Header(t protoreflect.FullName) []byte {
	return []byte(prefix + string(t) + "\n")
}

// Split returns the type data's header names ("" without a header) and the bytes after it.
func Split(data []byte) (protoreflect.FullName, []byte, error) {
	if !bytes.HasPrefix(data, []byte(marker)) {
		return "", data, nil
	}
	end := bytes.IndexByte(data[:min(len(data), maxHeaderBytes)], '\n')
	if end < 0 || !bytes.HasPrefix(data, []byte(prefix)) {
		return "", nil, &Error{Code: CodeHeader, Detail: "the file opens with the record-file marker but no valid header"}
	}
	t := protoreflect.FullName(data[len(prefix):end])
	if !t.IsValid() {
		return "", nil, &Error{Code: CodeHeader, Detail: "the header names no valid message type"}
	}
	return t, data[end+1:], nil
}

// ReadHeader reads r's header, if it has one, and returns the type it names ("" without one);
// r is left at the first record.
func ReadHeader(r *bufio.Reader) (protoreflect.FullName, error) {
	head, err := r.Peek(len(marker))
	if err != nil || string(head) != marker {
		return "", nil // shorter than a header, or no header: the records start here
	}
	line, err := r.ReadSlice('\n')
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) && err != io.EOF {
		return "", err
	}
	if len(line) > maxHeaderBytes || err != nil {
		return "", &Error{Code: CodeHeader, Detail: "the file opens with the record-file marker but no valid header"}
	}
	t, _, err := Split(line)
	return t, err
}

// Check refuses a file whose header names got when its reader wants want; an unheadered
// file (got "") is read as want.
func Check(file string, got, want protoreflect.FullName) error {
	if got == "" || got == want {
		return nil
	}
	return wrongType(file, got, want)
}

func wrongType(file string, got, want protoreflect.FullName) error {
	return &Error{Code: CodeWrongType, Detail: fmt.Sprintf("%s holds %s records, not %s", file, got, want)}
}

// Records checks data's header against want and splits the records after it.
func Records(file string, data []byte, want protoreflect.FullName) ([][]byte, error) {
	got, rest, err := Split(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := Check(file, got, want); err != nil {
		return nil, err
	}
	recs, err := Frames(rest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return recs, nil
}

// ReadCapped reads a whole file of at most max bytes; a longer one is refused with
// CodeTooLarge before more than max+1 bytes are held.
func ReadCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &Error{Code: CodeTooLarge, Detail: fmt.Sprintf("%s is larger than %d bytes", path, max)}
	}
	return b, nil
}

// fileTypes are the record types of the tool's files, which a JSON Lines record's shape is
// compared against: envelopes, then the outputs in their fixed order.
var fileTypes = func() []protoreflect.FullName {
	out := []protoreflect.FullName{envelopeType}
	for _, k := range kinds {
		out = append(out, k.Type)
	}
	return out
}()

// CheckJSON refuses a JSON Lines file whose record line is not a want but decodes strictly as
// another type of the tool's files. A line of no known shape is left to the reader, which
// reports (or dead-letters) it as a bad record.
func CheckJSON(file string, line []byte, want protoreflect.FullName) error {
	if decodes(line, want) {
		return nil
	}
	for _, t := range fileTypes {
		if t != want && decodes(line, t) {
			return wrongType(file, t, want)
		}
	}
	return nil
}

func decodes(line []byte, t protoreflect.FullName) bool {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(t)
	return err == nil && protojson.Unmarshal(line, mt.New().Interface()) == nil
}

// FirstLine returns the first non-blank line of a JSON Lines text.
func FirstLine(data []byte) []byte {
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if l := bytes.TrimSpace(line); len(l) > 0 {
			return l
		}
	}
	return nil
}

// IsJSONL reports whether a file name is a JSON Lines file's: *.jsonl or *.json.
func IsJSONL(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".json")
}

// NamedType is the type an output file's name says it holds ("" for another name):
// NAME.binpb, NAME.jsonl and their shards NAME-….
func NamedType(file string) protoreflect.FullName {
	base := file[strings.LastIndexAny(file, "/\\")+1:]
	if i := strings.IndexAny(base, ".-"); i >= 0 {
		base = base[:i]
	}
	if base == ResultsName {
		return envelopeType
	}
	for _, k := range kinds {
		if k.Name == base {
			return k.Type
		}
	}
	return ""
}

// Sniff checks a file from its first bytes head (a prefix of the file, or all of it): its
// header, or its first JSON record's shape, or an unheadered output file's name, against
// want. It is the launch-time check of an input file whose records a pipeline reads later.
func Sniff(file string, head []byte, want protoreflect.FullName) error {
	if IsJSONL(file) {
		line := FirstLine(head)
		if line == nil || bytes.Count(head, []byte("\n")) == 0 && len(head) >= sniffBytes {
			return nil // the first record is longer than the head: left to the reader
		}
		return CheckJSON(file, line, want)
	}
	got, _, err := Split(head)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if got == "" {
		got = NamedType(file)
	}
	return Check(file, got, want)
}

// sniffBytes is how much of a file Sniff's callers read.
const sniffBytes = 1 << 16

// SniffBytes is how many bytes of a file's head Sniff wants.
func SniffBytes() int { return sniffBytes }

// TempName is the name a file is written under before it is complete: hidden, and ending in
// .partial, so that no glob of the finished files (NAME.*, *.binpb) matches it. suffix tells
// concurrent writers of one file apart.
func TempName(path, suffix string) string {
	i := strings.LastIndexAny(path, "/\\") + 1
	return path[:i] + "." + path[i:] + "." + suffix + ".partial"
}

// WriteAtomic writes data to the local file path under a temporary name and renames it into
// place once it is complete and synced: path holds the old content or the new one, never a
// part of either. The temporary file is removed when the write fails.
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	dir := "."
	if i := strings.LastIndexAny(path, "/\\"); i >= 0 {
		dir = path[:i+1]
	}
	f, err := os.CreateTemp(dir, "."+path[strings.LastIndexAny(path, "/\\")+1:]+".*.partial")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Typed reports whether the local file path opens with a header (false when it cannot be read).
func Typed(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(marker))
	n, _ := io.ReadFull(f, head)
	return string(head[:n]) == marker
}
