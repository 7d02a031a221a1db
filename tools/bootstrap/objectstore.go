package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"tori.dev/pkg/objectstore/versityadmin"
)

// storeHolding is what one principal holds in the object store: an account of the least
// role and the one bucket it owns (docs/objectstore.md, "Buckets").
type storeHolding struct {
	Access string // the account's access key: a name, not a secret
	Bucket string
}

// storeHoldingOf is p's account and bucket, or ok=false for a principal with none: only
// deploys (artifacts) and the zone (its sites and dumps) keep blobs.
func storeHoldingOf(p principal, zone string) (storeHolding, bool) {
	switch p.Name {
	case "deploys":
		return storeHolding{Access: "tori-deploys", Bucket: "tori-artifacts"}, true
	case "zoneagent":
		z := bucketSafe(zone)
		return storeHolding{Access: "tori-zone-" + z, Bucket: "tori-zone-" + z}, true
	}
	return storeHolding{}, false
}

var notBucketSafe = regexp.MustCompile(`[^a-z0-9-]+`)

// bucketSafe maps a zone id onto what S3 allows in a bucket name (lowercase letters,
// digits, hyphens), so "eu_west" and "EU-west" make valid names.
func bucketSafe(zone string) string {
	return strings.Trim(notBucketSafe.ReplaceAllString(strings.ToLower(zone), "-"), "-")
}

// Variable names in a principal's file; the URL is the same for every holder.
const objectStoreURLVar = "OBJECT_STORE_URL"

func storeVars(p principal) (access, secret, bucket string) {
	pre := p.varPrefix() + "_OBJECT_STORE_"
	return pre + "ACCESS_KEY", pre + "SECRET_KEY", pre + "BUCKET"
}

// ensureStoreHolding writes p's object-store credentials into its file (keeping the secret
// already there) and, with admin credentials, makes the account and its bucket on the server.
// Holders without a bucket get none of these variables.
func ensureStoreHolding(ctx context.Context, s settings, p principal, file map[string]string) error {
	accessVar, secretVar, bucketVar := storeVars(p)
	h, ok := storeHoldingOf(p, s.Zone)
	if !ok {
		for _, v := range []string{objectStoreURLVar, accessVar, secretVar, bucketVar} {
			delete(file, v)
		}
		return nil
	}
	if bucketSafe(s.Zone) == "" {
		return fmt.Errorf("ZONE_ID %q makes no valid bucket name", s.Zone)
	}
	// Given in the environment (the in-cluster run), the secret is the one the offline run
	// wrote; otherwise the one kept in the file, or a new one.
	secret := os.Getenv(secretVar)
	if secret == "" && s.Credentials == credentialsInEnv {
		// Made up here, the secret would reach no workload: refuse instead.
		return fmt.Errorf("%s must be set (bootstrap -offline writes it to %s.env)", secretVar, p.Name)
	}
	if secret == "" {
		secret = file[secretVar]
	}
	if secret == "" {
		secret = newPassword()
	}
	file[objectStoreURLVar] = s.ObjectStoreURL
	file[accessVar], file[secretVar], file[bucketVar] = h.Access, secret, h.Bucket
	if s.Offline || s.ObjectStoreAdminAccess == "" {
		return nil
	}
	admin := versityadmin.Client{URL: s.ObjectStoreURL, AccessKey: s.ObjectStoreAdminAccess, SecretKey: s.ObjectStoreAdminSecret}
	if err := admin.EnsureUser(ctx, h.Access, secret); err != nil {
		return fmt.Errorf("object store (%s): %w", s.ObjectStoreURL, err)
	}
	if err := admin.EnsureBucket(ctx, h.Bucket, h.Access); err != nil {
		return fmt.Errorf("object store (%s): %w", s.ObjectStoreURL, err)
	}
	return nil
}
