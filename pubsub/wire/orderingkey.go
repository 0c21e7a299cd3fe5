package wire

import (
	"encoding/base64"
	"unicode/utf8"
)

// maxOrderingKey is Pub/Sub's limit on an ordering key's length in bytes.
const maxOrderingKey = 1024

// OrderingKey is the ordering key of an entity key: the key itself when it is valid UTF-8 of
// at most 1024 bytes, else "b64:" and its standard base64 (truncated to the limit).
func OrderingKey(entity []byte) string {
	if utf8.Valid(entity) && len(entity) <= maxOrderingKey {
		return string(entity)
	}
	k := "b64:" + base64.StdEncoding.EncodeToString(entity)
	return k[:min(len(k), maxOrderingKey)]
}
