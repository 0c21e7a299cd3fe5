package pipeline

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/beamagents/beamagents/records"
)

func init() {
	register.DoFn2x0[[]byte, func(int64, []byte)](&shardKeyFn{})
	register.DoFn4x1[context.Context, beam.Window, int64, func(*[]byte) bool, error](&writeShardFn{})
	register.Emitter2[int64, []byte]()
}

// WriteShards writes a PCollection<[]byte> of binary messages of the named type as shards
// written in parallel, each by one worker that streams its records to two files:
// NAME-SSSSS-of-NNNNN.binpb (a typed record file, as WriteRecords writes) and NAME-SSSSS-of-NNNNN.jsonl
// (protojson lines). A record's shard is a hash of its bytes, so a retried bundle puts it in
// the same shard. With window > 0 the records are first cut into fixed event-time windows
// and each window's shards are written when the watermark passes its end, named
// NAME-<startMs>-<endMs>-SSSSS-of-NNNNN: the form an unbounded input needs, since a global
// window never closes. Records within a shard are in no particular order, and a shard with
// no records writes no files.
func WriteShards(s beam.Scope, dir, name string, msgType protoreflect.FullName, col beam.PCollection, shards int, win time.Duration) {
	s = s.Scope("WriteShards_" + name)
	if shards < 1 {
		shards = 1
	}
	if win > 0 {
		col = beam.WindowInto(s, window.NewFixedWindows(win), col)
	}
	keyed := beam.ParDo(s, &shardKeyFn{Shards: shards}, col)
	beam.ParDo0(s, &writeShardFn{Dir: dir, Name: name, Type: string(msgType), Shards: shards}, beam.GroupByKey(s, keyed))
}

type shardKeyFn struct {
	Shards int
}

// The shard key is an int64 so that the grouping's coder is Beam's standard varint coder,
// not a Go-specific one (see Manifest).
func (f *shardKeyFn) ProcessElement(rec []byte, emit func(int64, []byte)) {
	h := fnv.New32a()
	h.Write(rec)
	emit(int64(h.Sum32()%uint32(f.Shards)), rec)
}

type writeShardFn struct {
	Dir, Name, Type string
	Shards          int
}

// ShardName is the base name (without extension) of one shard's files.
func ShardName(name string, w beam.Window, shard int64, shards int) string {
	if iw, ok := w.(window.IntervalWindow); ok {
		return fmt.Sprintf("%s-%d-%d-%05d-of-%05d", name, iw.Start.Milliseconds(), iw.End.Milliseconds(), shard, shards)
	}
	return fmt.Sprintf("%s-%05d-of-%05d", name, shard, shards)
}

func (f *writeShardFn) ProcessElement(ctx context.Context, w beam.Window, shard int64, next func(*[]byte) bool) error {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(f.Type))
	if err != nil {
		return err
	}
	base := join(f.Dir, ShardName(f.Name, w, shard, f.Shards))
	bin, err := openAtomic(ctx, base+".binpb")
	if err != nil {
		return err
	}
	defer bin.Abort()
	js, err := openAtomic(ctx, base+".jsonl")
	if err != nil {
		return err
	}
	defer js.Abort()
	if _, err := bin.Write(records.Header(mt.Descriptor().FullName())); err != nil {
		return err
	}
	var r, line, frame []byte
	for next(&r) {
		frame = records.AppendFrame(frame[:0], r)
		if line, err = appendJSONLine(line[:0], mt, r); err != nil {
			return err
		}
		if _, err := bin.Write(frame); err != nil {
			return err
		}
		if _, err := js.Write(line); err != nil {
			return err
		}
	}
	if err := bin.Commit(); err != nil {
		return err
	}
	return js.Commit()
}
