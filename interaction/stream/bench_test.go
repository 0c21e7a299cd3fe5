package stream_test

import (
	"testing"
	"time"

	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/testkit/corpus"
)

func benchDocs(b *testing.B) (*stream.Grammar, map[string][]byte) {
	g := grammar(b, "shop.proposal")
	return g, map[string][]byte{
		"2K":  corpus.Proposal2K(b, g.Schema(), testFiles(b)),
		"60K": corpus.Proposal60K(b, g.Schema(), testFiles(b)),
	}
}

// The three ways to admit one document, each to an admitted value.

func whole(g *stream.Grammar, doc []byte) bool {
	_, err := g.Schema().Decode(doc)
	return err == nil
}

func onePush(g *stream.Grammar, doc []byte) bool {
	d := g.NewDecoder()
	d.Push(doc)
	return d.Finish().State() == stream.Accepted
}

func byteAtATime(g *stream.Grammar, doc []byte) bool {
	d := g.NewDecoder()
	for i := range doc {
		d.Push(doc[i : i+1])
	}
	return d.Finish().State() == stream.Accepted
}

var ways = []struct {
	name string
	run  func(*stream.Grammar, []byte) bool
}{{"whole", whole}, {"one-push", onePush}, {"byte-at-a-time", byteAtATime}}

func BenchmarkDecode(b *testing.B) {
	g, docs := benchDocs(b)
	for _, size := range []string{"2K", "60K"} {
		doc := docs[size]
		for _, w := range ways {
			b.Run(size+"/"+w.name, func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					if !w.run(g, doc) {
						b.Fatal("refused")
					}
				}
			})
		}
	}
}

// BenchmarkRatios times the three ways interleaved in one loop, so all see the same machine
// load, and reports one push over whole and one byte at a time over one push.
func BenchmarkRatios(b *testing.B) {
	g, docs := benchDocs(b)
	for _, size := range []string{"2K", "60K"} {
		doc := docs[size]
		b.Run(size, func(b *testing.B) {
			var spent [3]time.Duration
			for b.Loop() {
				for i, w := range ways {
					t0 := time.Now()
					if !w.run(g, doc) {
						b.Fatal("refused")
					}
					spent[i] += time.Since(t0)
				}
			}
			b.ReportMetric(float64(len(doc)), "doc-bytes")
			for i, w := range ways {
				b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N), w.name+"-ns/op")
			}
			b.ReportMetric(float64(spent[1])/float64(spent[0]), "push/whole")
			b.ReportMetric(float64(spent[2])/float64(spent[1]), "bytewise/push")
		})
	}
}
