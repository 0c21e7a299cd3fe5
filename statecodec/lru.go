package statecodec

// Entry order is the LRU order of both memory and cache: least recently used first. These
// helpers keep it without a map field, as the wire format requires.

// moveToBack moves s[i] to the end, keeping the relative order of the others.
func moveToBack[T any](s []T, i int) {
	e := s[i]
	copy(s[i:], s[i+1:])
	s[len(s)-1] = e
}

// dedupeKeepLast drops every entry whose key appears again later (the later one is the more
// recently written) and returns the kept entries and the dropped ones.
func dedupeKeepLast[T any](s []T, key func(T) string) (kept, dropped []T) {
	seen := make(map[string]bool, len(s))
	dup := false
	for i := len(s) - 1; i >= 0; i-- {
		k := key(s[i])
		if seen[k] {
			dup = true
			break
		}
		seen[k] = true
	}
	if !dup {
		return s, nil
	}
	clear(seen)
	kept = make([]T, 0, len(s))
	for i := len(s) - 1; i >= 0; i-- {
		if k := key(s[i]); seen[k] {
			dropped = append(dropped, s[i])
		} else {
			seen[k] = true
			kept = append(kept, s[i])
		}
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	return kept, dropped
}

// evictFront drops least recently used entries while more than maxEntries remain or their
// total size exceeds maxBytes. It returns the kept entries, how many it dropped and their size.
func evictFront[T any](s []T, total int64, size func(T) int64, maxEntries int, maxBytes int64) (kept []T, n int, bytes int64) {
	for n < len(s) && (len(s)-n > maxEntries || total > maxBytes) {
		sz := size(s[n])
		total -= sz
		bytes += sz
		n++
	}
	if n == 0 {
		return s, 0, 0
	}
	kept = append(s[:0], s[n:]...)
	clear(s[len(kept):]) // release the evicted entries' memory
	return kept, n, bytes
}
