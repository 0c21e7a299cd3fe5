package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

var boltBucket = []byte("intents.v1")

// Bolt is the embedded durable Store on a bbolt file. Claims and completions go through
// db.Batch: concurrent calls share one transaction and one disk sync, so durability costs a
// sync per batch, not per intent. Lease expiry follows the clock the effector passes in.
type Bolt struct{ db *bolt.DB }

// OpenBolt opens (creating) the bbolt file at path.
func OpenBolt(path string) (*Bolt, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, &Error{Code: CodeFailed, Detail: "creating the store directory", Err: err}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, &Error{Code: CodeFailed, Detail: "opening " + path, Err: err}
	}
	db.MaxBatchDelay = 2 * time.Millisecond
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(boltBucket)
		return err
	}); err != nil {
		db.Close()
		return nil, &Error{Code: CodeFailed, Detail: "creating the bucket", Err: err}
	}
	return &Bolt{db: db}, nil
}

func boltClaim(owner string, until int64) []byte {
	b := make([]byte, 0, 9+len(owner))
	b = append(b, tagClaim)
	b = binary.BigEndian.AppendUint64(b, uint64(until))
	return append(b, owner...)
}

// Claim implements Store.
func (s *Bolt) Claim(_ context.Context, id, owner string, nowMs, leaseMs int64) (Claim, error) {
	var c Claim
	err := s.db.Batch(func(tx *bolt.Tx) error {
		c = Claim{}
		b := tx.Bucket(boltBucket)
		cur := b.Get([]byte(id))
		switch {
		case len(cur) > 0 && cur[0] == tagDone:
			c = Claim{State: Done, Result: append([]byte(nil), cur[1:]...)}
			return nil
		case len(cur) >= 9 && cur[0] == tagClaim:
			until := int64(binary.BigEndian.Uint64(cur[1:9]))
			if string(cur[9:]) != owner {
				if nowMs < until {
					c = Claim{State: Busy}
					return nil
				}
				c.TakenOver = true
			}
		case len(cur) > 0:
			return fmt.Errorf("record of %s is corrupt", id)
		}
		c.State = Claimed
		return b.Put([]byte(id), boltClaim(owner, nowMs+leaseMs))
	})
	if err != nil {
		return Claim{}, &Error{Code: CodeFailed, Detail: "claiming " + id, Err: err}
	}
	return c, nil
}

// Complete implements Store.
func (s *Bolt) Complete(_ context.Context, id, owner string, result []byte) ([]byte, error) {
	var rec []byte
	err := s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(boltBucket)
		if cur := b.Get([]byte(id)); len(cur) > 0 && cur[0] == tagDone {
			rec = append([]byte(nil), cur[1:]...)
			return nil
		}
		rec = result
		return b.Put([]byte(id), append([]byte{tagDone}, result...))
	})
	if err != nil {
		return nil, &Error{Code: CodeFailed, Detail: "recording the completion of " + id, Err: err}
	}
	return rec, nil
}

// Close implements Store.
func (s *Bolt) Close() error { return s.db.Close() }
