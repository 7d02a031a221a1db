package config

import (
	"errors"

	"tori.dev/pkg/objectstore"
)

// ZoneObjectStore is the zone's own account and bucket in the object store, as bin/bootstrap
// writes them to the zone agent's file (docs/objectstore.md): the zone's sites and dumps live
// there, so every zone agent needs it.
type ZoneObjectStore struct {
	ObjectStoreURL    string `env:"OBJECT_STORE_URL"`
	ObjectStoreAccess string `env:"ZONEAGENT_OBJECT_STORE_ACCESS_KEY"`
	ObjectStoreSecret string `env:"ZONEAGENT_OBJECT_STORE_SECRET_KEY" secret:"true"`
	ObjectStoreBucket string `env:"ZONEAGENT_OBJECT_STORE_BUCKET"`
}

// ObjectStoreConfig is the zone's way into its bucket.
func (z *ZoneObjectStore) ObjectStoreConfig() objectstore.Config {
	// ReadAhead: a site's bundle (and a dump) is read from its source while the part before
	// is sent, so a publication takes about the longer of the two, not their sum; the zone
	// pays one more 5 MiB part in memory while it uploads.
	return objectstore.Config{URL: z.ObjectStoreURL, AccessKey: z.ObjectStoreAccess, SecretKey: z.ObjectStoreSecret, Bucket: z.ObjectStoreBucket, ReadAhead: true}
}

func (z *ZoneObjectStore) validate() error {
	if _, err := objectstore.New(z.ObjectStoreConfig()); err != nil {
		return errors.New("OBJECT_STORE_URL and ZONEAGENT_OBJECT_STORE_ACCESS_KEY, _SECRET_KEY and _BUCKET are required (bin/bootstrap writes them to DATA_DIR/secrets/zoneagent.env): " + err.Error())
	}
	return nil
}
