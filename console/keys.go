package console

import (
	"crypto/sha256"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// The store's keys are bbolt keys, which bbolt refuses over 32 KiB, while an entity key, an
// intent id, a trace id or a reason comes from the outputs at any length. Each is stored
// under its stored form: itself up to MaxKeyBytes, else its first keptBytes followed by its
// SHA-256. A stored form of a long key is MaxKeyBytes+1 bytes, a length no key is stored
// as itself at, so two keys never share one; it starts as its key does, so a search by
// the first bytes of a key still finds it. The whole key is kept in a value: the long-keys
// bucket for entity keys, the record itself for ids, the count's value for reasons.

// MaxKeyBytes is the longest key the store keeps as itself; a longer one costs the store
// MaxKeyBytes+1 bytes in each key that names it, and its whole length once.
const MaxKeyBytes = 1024

// keptBytes is how much of a long key its stored form starts with.
const keptBytes = MaxKeyBytes + 1 - sha256.Size

// storeKey is k's stored form.
func storeKey(k []byte) []byte {
	if len(k) <= MaxKeyBytes {
		return k
	}
	sum := sha256.Sum256(k)
	return append(k[:keptBytes:keptBytes], sum[:]...)
}

// hashed reports whether sk is the stored form of a long key.
func hashed(sk []byte) bool { return len(sk) == MaxKeyBytes+1 }

// key returns entity key k's stored form, keeping the whole key of a long one the first
// time it is seen.
func (w *writer) key(k []byte) ([]byte, error) {
	sk := storeKey(k)
	if !hashed(sk) {
		return sk, nil
	}
	b := w.tx.Bucket(bLongKeys)
	if b.Get(sk) != nil {
		return sk, nil
	}
	return sk, b.Put(sk, k)
}

// fullKey is the entity key whose stored form is sk.
func fullKey(tx *bolt.Tx, sk []byte) []byte {
	if hashed(sk) {
		if k := tx.Bucket(bLongKeys).Get(sk); k != nil {
			return slices.Clone(k)
		}
	}
	return slices.Clone(sk)
}

// pathKey is the stored form of the key an entity page's path names. KeyPath names a long
// key by its stored form, so a path of MaxKeyBytes+1 bytes is one; any other is a key.
func pathKey(b []byte) []byte {
	if hashed(b) {
		return b
	}
	return storeKey(b)
}
