package statecodec_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/statecodec"
)

func goldenCache(name string) *pb.LlmCacheBlob {
	for _, c := range goldenv1.Cases() {
		if c.File == name {
			return c.Build().(*pb.LlmCacheBlob)
		}
	}
	panic(name)
}

func full(key, resp string, created, access int64) *pb.LlmCacheEntry {
	return &pb.LlmCacheEntry{CacheKey: key, Response: []byte(resp), ResponseDigest: digest([]byte(resp)), CreatedAtMs: created, LastAccessMs: access}
}

func digestOnly(key, resp string, created, access int64) *pb.LlmCacheEntry {
	return &pb.LlmCacheEntry{CacheKey: key, ResponseDigest: digest([]byte(resp)), CreatedAtMs: created, LastAccessMs: access, DigestOnly: true}
}

func sumResponses(es []*pb.LlmCacheEntry) int64 {
	var n int64
	for _, e := range es {
		n += int64(len(e.Response))
	}
	return n
}

func TestValidCacheKey(t *testing.T) {
	tests := []struct {
		name string
		key  string
		ok   bool
	}{
		{"sha-256 hex", cacheKey("x"), true},
		{"all zeros", strings.Repeat("0", 64), true},
		{"uppercase", strings.ToUpper(cacheKey("x")), false},
		{"63 digits", cacheKey("x")[:63], false},
		{"65 digits", cacheKey("x") + "0", false},
		{"empty", "", false},
		{"non-hex letter", "g" + cacheKey("x")[1:], false},
		{"multi-byte rune", "é" + cacheKey("x")[2:], false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := statecodec.ValidCacheKey(tc.key); got != tc.ok {
				t.Fatalf("ValidCacheKey(%q) = %v", tc.key, got)
			}
		})
	}
}

// ValidCacheKey tests eight digits at once; it must agree with the byte-by-byte definition for
// every byte value at every position, and with several bytes changed.
func TestValidCacheKeyEveryByte(t *testing.T) {
	isKey := func(k string) bool {
		for i := 0; i < len(k); i++ {
			if c := k[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
		return len(k) == 64
	}
	check := func(k []byte) {
		t.Helper()
		if got, want := statecodec.ValidCacheKey(string(k)), isKey(string(k)); got != want {
			t.Fatalf("ValidCacheKey(%q) = %v, want %v", k, got, want)
		}
	}
	base := []byte(cacheKey("x"))
	for c := range 256 {
		for p := range base {
			k := bytes.Clone(base)
			k[p] = byte(c)
			check(k)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("0123456789abcdef/:@`AFgG\x00\x7f\x80\xb0\xe6\xff")
	for range 20000 {
		k := bytes.Clone(base)
		for range r.IntN(4) + 1 {
			k[r.IntN(len(k))] = alphabet[r.IntN(len(alphabet))]
		}
		check(k)
	}
}

func TestDecodeCache(t *testing.T) {
	k1, k2, k3 := cacheKey("1"), cacheKey("2"), cacheKey("3")
	big := strings.Repeat("x", 11)
	tests := []struct {
		name      string
		in        []byte
		opts      statecodec.CacheOptions
		want      *pb.LlmCacheBlob
		wantStats statecodec.Stats
		wantErr   *statecodec.Error
	}{
		{name: "empty cell is a new cache", want: &pb.LlmCacheBlob{StateSchemaVersion: 1}},
		{name: "golden v1 blob verbatim", in: golden(t, "llm_cache_blob.binpb"), want: goldenCache("llm_cache_blob.binpb")},
		{name: "golden digest-only blob verbatim", in: golden(t, "llm_cache_blob_digest_only.binpb"), want: goldenCache("llm_cache_blob_digest_only.binpb")},
		{name: "pre-versioned blob upgraded explicitly",
			in:        marshal(t, &pb.LlmCacheBlob{Entries: []*pb.LlmCacheEntry{full(k1, "r", 1, 1)}, TotalResponseBytes: 1}),
			want:      &pb.LlmCacheBlob{StateSchemaVersion: 1, Entries: []*pb.LlmCacheEntry{full(k1, "r", 1, 1)}, TotalResponseBytes: 1},
			wantStats: statecodec.Stats{Migrated: 1, PreVersioned: 1}},
		{name: "stored total disagreeing is repaired",
			in:        marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 1, Entries: []*pb.LlmCacheEntry{full(k1, "rr", 1, 1)}, TotalResponseBytes: 7}),
			want:      &pb.LlmCacheBlob{StateSchemaVersion: 1, Entries: []*pb.LlmCacheEntry{full(k1, "rr", 1, 1)}, TotalResponseBytes: 2},
			wantStats: statecodec.Stats{TotalRepairs: 1}},
		{name: "duplicate key keeps the later entry",
			in: marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 1, TotalResponseBytes: 5, Entries: []*pb.LlmCacheEntry{
				full(k1, "old", 1, 1), full(k1, "ne", 2, 2)}}),
			want:      &pb.LlmCacheBlob{StateSchemaVersion: 1, TotalResponseBytes: 2, Entries: []*pb.LlmCacheEntry{full(k1, "ne", 2, 2)}},
			wantStats: statecodec.Stats{DuplicatesDropped: 1}},
		{name: "a response over the cap becomes digest only on load",
			in:        marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 1, TotalResponseBytes: 11, Entries: []*pb.LlmCacheEntry{full(k1, big, 1, 1)}}),
			opts:      statecodec.CacheOptions{MaxResponseBytes: 10},
			want:      &pb.LlmCacheBlob{StateSchemaVersion: 1, Entries: []*pb.LlmCacheEntry{digestOnly(k1, big, 1, 1)}},
			wantStats: statecodec.Stats{DigestOnly: 1}},
		{name: "over the entry cap is evicted on load",
			in: marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 1, TotalResponseBytes: 3, Entries: []*pb.LlmCacheEntry{
				full(k1, "a", 1, 1), full(k2, "b", 2, 2), full(k3, "c", 3, 3)}}),
			opts:      statecodec.CacheOptions{MaxEntries: 2},
			want:      &pb.LlmCacheBlob{StateSchemaVersion: 1, TotalResponseBytes: 2, Entries: []*pb.LlmCacheEntry{full(k2, "b", 2, 2), full(k3, "c", 3, 3)}},
			wantStats: statecodec.Stats{Evictions: 1, EvictedBytes: 1}},
		{name: "over the byte cap is evicted on load",
			in: marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 1, TotalResponseBytes: 9, Entries: []*pb.LlmCacheEntry{
				full(k1, "aaa", 1, 1), full(k2, "bbb", 2, 2), full(k3, "ccc", 3, 3)}}),
			opts:      statecodec.CacheOptions{MaxResponseBytes: 6},
			want:      &pb.LlmCacheBlob{StateSchemaVersion: 1, TotalResponseBytes: 6, Entries: []*pb.LlmCacheEntry{full(k2, "bbb", 2, 2), full(k3, "ccc", 3, 3)}},
			wantStats: statecodec.Stats{Evictions: 1, EvictedBytes: 3}},
		{name: "truncated bytes are corrupt", in: golden(t, "llm_cache_blob.binpb")[:20], wantErr: statecodec.ErrCorrupt},
		{name: "future version is refused", in: marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 2}), wantErr: statecodec.ErrFutureVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Clone(tc.in)
			c, err := statecodec.DecodeCache(in, tc.opts)
			if !bytes.Equal(in, tc.in) {
				t.Fatal("decode modified its input")
			}
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr, statecodec.CellLLMCache)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mustEqualProto(t, tc.want, c.Proto())
			if c.Stats() != tc.wantStats {
				t.Fatalf("stats = %+v, want %+v", c.Stats(), tc.wantStats)
			}
		})
	}
}

// cacheOp is one step of a cache scenario.
type cacheOp struct {
	op         string // store, lookup, expire
	key        string
	resp       string
	at         int64
	status     statecodec.LookupStatus // lookup: expected status
	digestOnly bool                    // store: expected report
	expired    int                     // expire: expected count
	err        *statecodec.Error
}

func TestCacheOperations(t *testing.T) {
	k1, k2, k3 := cacheKey("1"), cacheKey("2"), cacheKey("3")
	const h = int64(time.Hour / time.Millisecond)
	tests := []struct {
		name      string
		opts      statecodec.CacheOptions
		ops       []cacheOp
		want      []*pb.LlmCacheEntry
		wantStats statecodec.Stats
	}{
		{name: "miss then store then hit",
			ops: []cacheOp{{op: "lookup", key: k1, at: 1, status: statecodec.Miss}, {op: "store", key: k1, resp: "r1", at: 2},
				{op: "lookup", key: k1, at: 3, status: statecodec.Hit}},
			want: []*pb.LlmCacheEntry{full(k1, "r1", 2, 3)}},
		{name: "hit moves to most recent",
			ops: []cacheOp{{op: "store", key: k1, resp: "a", at: 1}, {op: "store", key: k2, resp: "b", at: 2},
				{op: "lookup", key: k1, at: 3, status: statecodec.Hit}},
			want: []*pb.LlmCacheEntry{full(k2, "b", 2, 2), full(k1, "a", 1, 3)}},
		{name: "a response too big to keep becomes digest only",
			opts: statecodec.CacheOptions{MaxResponseBytes: 4},
			ops: []cacheOp{{op: "store", key: k1, resp: "small", at: 1, digestOnly: true},
				{op: "lookup", key: k1, at: 2, status: statecodec.DigestOnlyHit}},
			want:      []*pb.LlmCacheEntry{digestOnly(k1, "small", 1, 2)},
			wantStats: statecodec.Stats{DigestOnly: 1}},
		{name: "a response of exactly the cap is kept",
			opts: statecodec.CacheOptions{MaxResponseBytes: 4},
			ops:  []cacheOp{{op: "store", key: k1, resp: "four", at: 1}},
			want: []*pb.LlmCacheEntry{full(k1, "four", 1, 1)}},
		{name: "TTL expires at exactly created plus TTL",
			opts: statecodec.CacheOptions{TTL: time.Hour},
			ops: []cacheOp{{op: "store", key: k1, resp: "a", at: t0}, {op: "lookup", key: k1, at: t0 + h - 1, status: statecodec.Hit},
				{op: "lookup", key: k1, at: t0 + h, status: statecodec.Miss}},
			want:      nil,
			wantStats: statecodec.Stats{Expired: 1}},
		{name: "default TTL is six hours from the first store, not from the last hit",
			ops: []cacheOp{{op: "store", key: k1, resp: "a", at: t0}, {op: "lookup", key: k1, at: t0 + 5*h, status: statecodec.Hit},
				{op: "lookup", key: k1, at: t0 + 6*h - 1, status: statecodec.Hit}, {op: "lookup", key: k1, at: t0 + 6*h, status: statecodec.Miss}},
			wantStats: statecodec.Stats{Expired: 1}},
		{name: "a lookup sweeps every expired entry",
			opts: statecodec.CacheOptions{TTL: time.Hour},
			ops: []cacheOp{{op: "store", key: k1, resp: "a", at: t0}, {op: "store", key: k2, resp: "b", at: t0 + 1},
				{op: "store", key: k3, resp: "c", at: t0 + h}, {op: "lookup", key: k3, at: t0 + h + 1, status: statecodec.Hit}},
			want:      []*pb.LlmCacheEntry{full(k3, "c", t0+h, t0+h+1)},
			wantStats: statecodec.Stats{Expired: 2}},
		{name: "an event earlier than the store does not expire it",
			opts: statecodec.CacheOptions{TTL: time.Hour},
			ops:  []cacheOp{{op: "store", key: k1, resp: "a", at: t0}, {op: "lookup", key: k1, at: t0 - 10*h, status: statecodec.Hit}},
			want: []*pb.LlmCacheEntry{full(k1, "a", t0, t0)}},
		{name: "extreme event times do not overflow",
			opts: statecodec.CacheOptions{TTL: time.Hour},
			ops: []cacheOp{{op: "store", key: k1, resp: "a", at: math.MinInt64}, {op: "expire", at: math.MaxInt64, expired: 1},
				{op: "store", key: k2, resp: "b", at: math.MaxInt64}, {op: "expire", at: math.MinInt64}},
			want:      []*pb.LlmCacheEntry{full(k2, "b", math.MaxInt64, math.MaxInt64)},
			wantStats: statecodec.Stats{Expired: 1}},
		{name: "entry cap evicts least recently used",
			opts: statecodec.CacheOptions{MaxEntries: 2},
			ops: []cacheOp{{op: "store", key: k1, resp: "a", at: 1}, {op: "store", key: k2, resp: "b", at: 2},
				{op: "lookup", key: k1, at: 3, status: statecodec.Hit}, {op: "store", key: k3, resp: "c", at: 4}},
			want:      []*pb.LlmCacheEntry{full(k1, "a", 1, 3), full(k3, "c", 4, 4)},
			wantStats: statecodec.Stats{Evictions: 1, EvictedBytes: 1}},
		{name: "byte cap evicts least recently used",
			opts: statecodec.CacheOptions{MaxResponseBytes: 5},
			ops: []cacheOp{{op: "store", key: k1, resp: "aa", at: 1}, {op: "store", key: k2, resp: "bb", at: 2},
				{op: "store", key: k3, resp: "ccc", at: 3}},
			want:      []*pb.LlmCacheEntry{full(k2, "bb", 2, 2), full(k3, "ccc", 3, 3)},
			wantStats: statecodec.Stats{Evictions: 1, EvictedBytes: 2}},
		{name: "digest-only entries count toward the entry cap but not the byte cap",
			opts: statecodec.CacheOptions{MaxEntries: 2, MaxResponseBytes: 2},
			ops: []cacheOp{{op: "store", key: k1, resp: "big!", at: 1, digestOnly: true}, {op: "store", key: k2, resp: "bb", at: 2},
				{op: "store", key: k3, resp: "huge", at: 3, digestOnly: true}},
			want:      []*pb.LlmCacheEntry{full(k2, "bb", 2, 2), digestOnly(k3, "huge", 3, 3)},
			wantStats: statecodec.Stats{DigestOnly: 2, Evictions: 1}},
		{name: "storing the same response again keeps created_at",
			opts: statecodec.CacheOptions{TTL: time.Hour},
			ops:  []cacheOp{{op: "store", key: k1, resp: "a", at: t0}, {op: "store", key: k1, resp: "a", at: t0 + 10}},
			want: []*pb.LlmCacheEntry{full(k1, "a", t0, t0+10)}},
		{name: "storing a different response restarts the TTL",
			opts: statecodec.CacheOptions{TTL: time.Hour},
			ops:  []cacheOp{{op: "store", key: k1, resp: "a", at: t0}, {op: "store", key: k1, resp: "b", at: t0 + 10}},
			want: []*pb.LlmCacheEntry{full(k1, "b", t0+10, t0+10)}},
		{name: "invalid keys are refused and change nothing",
			ops: []cacheOp{{op: "store", key: k1, resp: "a", at: 1}, {op: "store", key: "prompt", resp: "x", at: 2, err: statecodec.ErrInvalidArgument},
				{op: "lookup", key: strings.ToUpper(k1), at: 3, err: statecodec.ErrInvalidArgument}},
			want: []*pb.LlmCacheEntry{full(k1, "a", 1, 1)}},
		{name: "empty response is an ordinary hit",
			ops:  []cacheOp{{op: "store", key: k1, at: 1}, {op: "lookup", key: k1, at: 2, status: statecodec.Hit}},
			want: []*pb.LlmCacheEntry{full(k1, "", 1, 2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := statecodec.NewCache(tc.opts)
			for i, op := range tc.ops {
				applyCacheOp(t, i, c, op)
				checkCacheInvariants(t, c)
			}
			mustEqualProto(t, &pb.LlmCacheBlob{StateSchemaVersion: 1, Entries: tc.want, TotalResponseBytes: sumResponses(tc.want)}, c.Proto())
			if c.Stats() != tc.wantStats {
				t.Fatalf("stats = %+v, want %+v", c.Stats(), tc.wantStats)
			}
			b, err := c.Encode()
			if err != nil {
				t.Fatal(err)
			}
			back, err := statecodec.DecodeCache(b, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			mustEqualProto(t, c.Proto(), back.Proto())
			if back.Stats() != (statecodec.Stats{}) {
				t.Fatalf("re-decode stats = %+v", back.Stats())
			}
		})
	}
}

func applyCacheOp(t *testing.T, i int, c *statecodec.Cache, op cacheOp) {
	t.Helper()
	before := c.Proto()
	switch op.op {
	case "store":
		do, err := c.Store(op.key, []byte(op.resp), op.at)
		if op.err != nil {
			wantErr(t, err, op.err, statecodec.CellLLMCache)
		} else if err != nil || do != op.digestOnly {
			t.Fatalf("op %d: Store = %v, %v", i, do, err)
		}
	case "lookup":
		l, err := c.Lookup(op.key, op.at)
		if op.err != nil {
			wantErr(t, err, op.err, statecodec.CellLLMCache)
			break
		}
		if err != nil || l.Status != op.status {
			t.Fatalf("op %d: Lookup = %v, %v; want %v", i, l.Status, err, op.status)
		}
		if l.Status == statecodec.Hit && len(l.Response) > 0 {
			l.Response[0] ^= 0xff // a copy: must not reach the state
			if again, _ := c.Lookup(op.key, op.at); bytes.Equal(again.Response, l.Response) {
				t.Fatalf("op %d: Lookup returned the stored bytes, not a copy", i)
			}
		}
	case "expire":
		if n := c.Expire(op.at); n != op.expired {
			t.Fatalf("op %d: Expire = %d, want %d", i, n, op.expired)
		}
	default:
		t.Fatalf("unknown op %q", op.op)
	}
	if op.err != nil && !proto.Equal(before, c.Proto()) {
		t.Fatalf("op %d: refused operation changed the cache", i)
	}
}

func checkCacheInvariants(t testing.TB, c *statecodec.Cache) {
	t.Helper()
	p, o := c.Proto(), c.Options()
	keys := map[string]bool{}
	for _, e := range p.Entries {
		if keys[e.CacheKey] {
			t.Fatalf("duplicate key %s", e.CacheKey)
		}
		keys[e.CacheKey] = true
		if e.DigestOnly && len(e.Response) != 0 {
			t.Fatalf("digest-only entry %s keeps a response", e.CacheKey)
		}
	}
	switch {
	case p.TotalResponseBytes != sumResponses(p.Entries) || c.TotalResponseBytes() != p.TotalResponseBytes:
		t.Fatalf("total %d, entries sum to %d", p.TotalResponseBytes, sumResponses(p.Entries))
	case p.TotalResponseBytes > o.MaxResponseBytes || len(p.Entries) > o.MaxEntries || c.Len() != len(p.Entries):
		t.Fatalf("caps broken: %d bytes / %d entries over %+v", p.TotalResponseBytes, len(p.Entries), o)
	}
}

func TestCacheDefaults(t *testing.T) {
	want := statecodec.CacheOptions{MaxEntries: 64, TTL: 6 * time.Hour, MaxResponseBytes: 100 << 10}
	for _, o := range []statecodec.CacheOptions{{}, {MaxEntries: -1, TTL: -time.Second, MaxResponseBytes: -1}} {
		if got := statecodec.NewCache(o).Options(); got != want {
			t.Fatalf("options %+v resolve to %+v, want %+v", o, got, want)
		}
	}
	c := statecodec.NewCache(statecodec.CacheOptions{})
	for i := range 65 {
		if _, err := c.Store(cacheKey(string(rune('A'+i))), []byte("r"), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 64 || c.Stats().Evictions != 1 {
		t.Fatalf("65 stores: len %d, stats %+v", c.Len(), c.Stats())
	}
	if do, err := c.Store(cacheKey("big"), make([]byte, 100<<10+1), 100); err != nil || !do {
		t.Fatalf("100 KiB + 1 response: digestOnly %v, %v", do, err)
	}
}

// A retry that finds a digest-only entry can tell whether the provider answered the same.
func TestDigestOnlyHitDetectsADifferentAnswer(t *testing.T) {
	c := statecodec.NewCache(statecodec.CacheOptions{MaxResponseBytes: 8})
	k := cacheKey("request")
	if _, err := c.Store(k, []byte("the first long answer"), t0); err != nil {
		t.Fatal(err)
	}
	l, err := c.Lookup(k, t0+1)
	if err != nil || l.Status != statecodec.DigestOnlyHit || l.Response != nil || len(l.Digest) != 32 {
		t.Fatalf("lookup = %+v, %v", l, err)
	}
	if !l.Matches([]byte("the first long answer")) || l.Matches([]byte("another long answer")) {
		t.Fatal("Matches must compare against the recorded digest")
	}
	if (statecodec.Lookup{Status: statecodec.Miss}).Matches(nil) {
		t.Fatal("a miss matches nothing")
	}
}

// An entry whose response no longer matches its digest is never replayed.
func TestCorruptEntriesAreDroppedOnLookup(t *testing.T) {
	k1, k2 := cacheKey("1"), cacheKey("2")
	bad := full(k1, "right", 1, 1)
	bad.Response = []byte("wrong")
	short := digestOnly(k2, "x", 1, 1)
	short.ResponseDigest = short.ResponseDigest[:31]
	c, err := statecodec.DecodeCache(marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 1, TotalResponseBytes: 5,
		Entries: []*pb.LlmCacheEntry{bad, short}}), statecodec.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{k1, k2} {
		if l, err := c.Lookup(k, 2); err != nil || l.Status != statecodec.Miss {
			t.Fatalf("lookup %s = %+v, %v; want a miss", k[:8], l, err)
		}
	}
	if c.Len() != 0 || c.TotalResponseBytes() != 0 || c.Stats().CorruptEntries != 2 {
		t.Fatalf("len %d, total %d, stats %+v", c.Len(), c.TotalResponseBytes(), c.Stats())
	}
}

func TestLookupStatusString(t *testing.T) {
	for s, want := range map[statecodec.LookupStatus]string{statecodec.Miss: "miss", statecodec.Hit: "hit", statecodec.DigestOnlyHit: "digest_only_hit", 9: "unknown"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q", s, s.String())
		}
	}
}

func TestCacheUnknownFieldsSurviveRewrite(t *testing.T) {
	b := withUnknown(marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 1, TotalResponseBytes: 1, Entries: []*pb.LlmCacheEntry{full(cacheKey("1"), "a", 1, 1)}}))
	c, err := statecodec.DecodeCache(b, statecodec.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Store(cacheKey("2"), []byte("b"), 2); err != nil {
		t.Fatal(err)
	}
	out, err := c.Encode()
	if err != nil || !hasUnknown99(out) {
		t.Fatalf("unknown field lost on rewrite (%v)", err)
	}
}

// The usage and answering model stored with a response come back with it, through an encode
// and decode, for full and digest-only entries; storing the key again replaces them.
func TestCacheRecordsTheAnswer(t *testing.T) {
	c := statecodec.NewCache(statecodec.CacheOptions{MaxResponseBytes: 8})
	small, large := cacheKey("small"), cacheKey("large")
	a := statecodec.Answer{InputTokens: 120, OutputTokens: 30, AnsweredBy: "fallback-model"}
	if _, err := c.StoreAnswer(small, []byte("short"), a, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StoreAnswer(large, []byte("a response over the bound"), a, t0); err != nil {
		t.Fatal(err)
	}
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := statecodec.DecodeCache(b, c.Options())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{small, large} {
		if l, err := d.Lookup(k, t0+1); err != nil || l.Answer != a {
			t.Fatalf("lookup %+v, %v", l, err)
		}
	}
	if _, err := d.Store(small, []byte("short"), t0+2); err != nil {
		t.Fatal(err)
	}
	if l, _ := d.Lookup(small, t0+3); l.Answer != (statecodec.Answer{}) {
		t.Fatalf("a plain store keeps %+v", l.Answer)
	}
}
