package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/beamagents/beamagents/internal/recfile"
)

// WriteLocal writes records (binary messages of type msgType) to dir/NAME.binpb and
// dir/NAME.jsonl exactly as WriteRecords does, without a pipeline: for tools that run the
// agent in memory (offline replay) and must produce the same files.
func WriteLocal(dir, name string, msgType protoreflect.FullName, records [][]byte) error {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(msgType)
	if err != nil {
		return err
	}
	sorted := slices.Clone(records)
	slices.SortFunc(sorted, bytes.Compare)
	bin, js, err := render(mt, sorted)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := recfile.WriteAtomic(filepath.Join(dir, name+".binpb"), bin, 0o644); err != nil {
		return err
	}
	return recfile.WriteAtomic(filepath.Join(dir, name+".jsonl"), js, 0o644)
}
