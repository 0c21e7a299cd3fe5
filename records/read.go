package records

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ReadFile reads a whole file of records of type want (up to MaxFileBytes) and splits it into
// records: the non-blank lines of a JSON Lines file (refused when its first record has
// another type's shape), else the length-delimited frames of a typed record file (refused when
// its header, or an unheadered output file's name, names another type).
func ReadFile(path string, want protoreflect.FullName) ([][]byte, error) {
	data, err := ReadCapped(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	if err := Sniff(path, data, want); err != nil {
		return nil, err
	}
	if !IsJSONL(path) {
		return Records(path, data, want)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			out = append(out, bytes.Clone(line))
		}
	}
	return out, sc.Err()
}

// ReadMessages reads every record of files (JSON Lines or typed record files, ReadFile) as
// messages M; a record that is not an M names its file and position.
func ReadMessages[M proto.Message](files []string, newM func() M) ([]M, error) {
	var out []M
	for _, f := range files {
		recs, err := ReadFile(f, newM().ProtoReflect().Descriptor().FullName())
		if err != nil {
			return nil, err
		}
		for i, r := range recs {
			m := newM()
			if IsJSONL(f) {
				err = protojson.Unmarshal(r, m)
			} else {
				err = proto.Unmarshal(r, m)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: record %d is not a %s: %v", f, i+1, m.ProtoReflect().Descriptor().Name(), err)
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// Glob returns the files pattern matches; none is an error naming the pattern.
func Glob(pattern string) ([]string, error) {
	files, err := filepath.Glob(pattern)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%q matches no file", pattern)
	}
	return files, err
}
