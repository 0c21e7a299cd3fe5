package memory

import (
	"encoding/binary"
	"fmt"

	"github.com/beamagents/beamagents/records"
)

// headerVersion is the first byte of a compacted ring's header slot. A later layout takes
// another byte, so an older build refuses it as ErrCorrupt instead of misreading it.
const headerVersion = 1

// headerOverhead bounds what the header slot adds to its summary: the version byte, the
// compacted count and the slot's own length prefix.
const headerOverhead = 1 + 2*binary.MaxVarintLen64

// encode returns the memory value of a compacted ring: the ring encoding Context.Ring reads
// (each slot a uvarint length and its bytes), whose first slot is the header (version,
// compacted count as a uvarint, summary) and whose other slots are the entries, oldest first.
func encode(c Contents) []byte {
	header := binary.AppendUvarint([]byte{headerVersion}, uint64(c.Compacted))
	header = append(header, c.Summary...)
	b := records.AppendFrame(make([]byte, 0, size(len(c.Summary), c.Entries)), header)
	for _, e := range c.Entries {
		b = records.AppendFrame(b, e)
	}
	return b
}

// size is an upper bound of len(encode) for a summary of summaryLen bytes and entries,
// whatever the compacted count.
func size(summaryLen int, entries [][]byte) int {
	n := headerOverhead + summaryLen
	for _, e := range entries {
		n += frameSize(e)
	}
	return n
}

func frameSize(e []byte) int {
	var b [binary.MaxVarintLen64]byte
	return len(binary.AppendUvarint(b[:0], uint64(len(e)))) + len(e)
}

// split reads the slots of a compacted ring (Context.Ring's decoding of its memory entry).
// No slots is the empty ring, never written.
func split(slots [][]byte) (Contents, error) {
	if len(slots) == 0 {
		return Contents{}, nil
	}
	h := slots[0]
	if len(h) == 0 || h[0] != headerVersion {
		return Contents{}, fmt.Errorf("%w: its header slot has no version %d", ErrCorrupt, headerVersion)
	}
	n, k := binary.Uvarint(h[1:])
	if k <= 0 || n > 1<<62 {
		return Contents{}, fmt.Errorf("%w: its compacted count is not a uvarint", ErrCorrupt)
	}
	c := Contents{Compacted: int64(n), Entries: slots[1:]}
	if s := h[1+k:]; len(s) > 0 {
		c.Summary = s
	}
	return c, nil
}
