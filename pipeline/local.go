package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/beamagents/beamagents/records"
)

// WriteLocal writes recs (binary messages of type msgType) to dir/NAME.binpb and
// dir/NAME.jsonl exactly as WriteRecords does, without a pipeline: for tools that run the
// agent in memory (offline replay) and must produce the same files.
func WriteLocal(dir, name string, msgType protoreflect.FullName, recs [][]byte) error {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(msgType)
	if err != nil {
		return err
	}
	sorted := slices.Clone(recs)
	slices.SortFunc(sorted, bytes.Compare)
	bin, js, err := render(mt, sorted)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := records.WriteAtomic(filepath.Join(dir, name+".binpb"), bin, 0o644); err != nil {
		return err
	}
	return records.WriteAtomic(filepath.Join(dir, name+".jsonl"), js, 0o644)
}
