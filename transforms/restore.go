package transforms

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register.DoFn4x0[context.Context, []byte, func([]byte, []byte), func([]byte)](&decodeSnapshotFn{})
}

// DecodeSnapshots turns StateSnapshot records (as export requests emit them, binary or
// protojson) into RunAgent inputs that restore each snapshot's key
// (PCollection<KV<[]byte, []byte>>, to be flattened with DecodeEnvelopes' output), and dead
// letters for records that do not decode. A restore applies only to a key without state;
// it is applied when it arrives, before the key's buffered envelopes.
func DecodeSnapshots(s beam.Scope, format Format, records beam.PCollection) (keyed, dead beam.PCollection) {
	s = s.Scope("DecodeSnapshots")
	return beam.ParDo2(s, &decodeSnapshotFn{Format: format}, records)
}

// DecodeParked is DecodeSnapshots for a previous run's snapshots output: it restores only the
// keys that run parked at the end of its input (request id drive.ParkedRequestID) and passes
// over the snapshots that export requests asked for.
func DecodeParked(s beam.Scope, format Format, records beam.PCollection) (keyed, dead beam.PCollection) {
	s = s.Scope("DecodeParked")
	return beam.ParDo2(s, &decodeSnapshotFn{Format: format, Parked: true}, records)
}

type decodeSnapshotFn struct {
	Format Format
	Parked bool // restore only parked snapshots
}

func (f *decodeSnapshotFn) ProcessElement(ctx context.Context, rec []byte, keyed func([]byte, []byte), dead func([]byte)) {
	snap, err := drive.DecodeSnapshot(f.Format, rec)
	if err != nil {
		dead(drive.Marshal(drive.DeadLetter(snap.GetEntityKey(), 0, records.ReasonRestoreRefused, err, rec)))
		return
	}
	if f.Parked && snap.GetRequestId() != drive.ParkedRequestID {
		return
	}
	keyed(snap.GetEntityKey(), drive.RestoreValue(snap))
}
