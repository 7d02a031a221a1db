package sites

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/artifact"
)

// tarEntry is one entry of a test archive: a regular file unless typ says otherwise.
type tarEntry struct {
	name, body, link string
	typ              byte
}

func tarOf(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: e.typ, Linkname: e.link}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// streamStore is a zone's site store and the same holder's low-level client, which lists the
// bucket's unfinished multipart uploads.
func streamStore(t *testing.T) (Store, minio.Core, string) {
	t.Helper()
	env := testinfra.StartObjectStore(t).ZoneObjectStoreEnv(t, "sites-stream")
	cfg := objectstore.Config{URL: env["OBJECT_STORE_URL"], AccessKey: env["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"], SecretKey: env["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], Bucket: env["ZONEAGENT_OBJECT_STORE_BUCKET"], ReadAhead: true}
	bucket, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(strings.TrimPrefix(cfg.URL, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return Store{Bucket: bucket}, minio.Core{Client: c}, cfg.Bucket
}

func publishArchive(s Store, deployID string, archive []byte, lim artifact.Limits) error {
	return s.PublishFiles(context.Background(), "app1", deployID, func(add func(string, int64, io.Reader) error) error {
		return artifact.Files(bytes.NewReader(archive), lim, add)
	})
}

// A site published straight from its archive is refused for whatever Unpack refuses, with the
// same error (artifact.ErrUnsafe, which the agent reports as invalid_artifact), even when the
// refused entry comes after enough bytes to have started the bundle's multipart upload; and a
// refused site leaves nothing in the store: no bundle, no manifest, no unfinished upload.
func TestPublishFromArchiveRefusesWhatUnpackRefuses(t *testing.T) {
	s, core, bucket := streamStore(t)
	big := tarEntry{name: "big.bin", body: strings.Repeat("x", objectstore.PartSize+1)} // one part already sent
	lim := artifact.Limits{MaxBytes: objectstore.PartSize + 100, MaxEntries: 5}
	for _, tc := range []struct {
		name    string
		entries []tarEntry
		want    string
	}{
		{"link", []tarEntry{{name: "index.html", body: "hi"}, {name: "leak", link: "index.html", typ: tar.TypeSymlink}}, "a site holds no links"},
		{"link after a part", []tarEntry{big, {name: "leak", link: "big.bin", typ: tar.TypeSymlink}}, "a site holds no links"},
		{"hard link", []tarEntry{{name: "index.html", body: "hi"}, {name: "leak", link: "index.html", typ: tar.TypeLink}}, "a hard link"},
		{"dotdot name", []tarEntry{big, {name: "a/../../escape.html", body: "x"}}, `path "a/../../escape.html"`},
		{"absolute name", []tarEntry{{name: "/etc/passwd", body: "x"}}, `path "/etc/passwd"`},
		{"fifo", []tarEntry{{name: "pipe", typ: tar.TypeFifo}}, "a FIFO"},
		{"too large", []tarEntry{big, {name: "more.bin", body: strings.Repeat("y", 100)}}, "more than"},
		{"too many entries", []tarEntry{big, {name: "1"}, {name: "2"}, {name: "3"}, {name: "4"}, {name: "5"}}, "more than 5 entries"},
		{"a file where a folder is", []tarEntry{big, {name: "a", typ: tar.TypeDir}, {name: "a", body: "x"}}, "a folder has that name"},
		{"a folder where a file is", []tarEntry{{name: "a", body: "x"}, {name: "a/b.html", body: "x"}}, `"a" is a file`},
		{"truncated", nil, "unsafe artifact"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			archive := tarOf(t, tc.entries...)
			if tc.entries == nil {
				archive = tarOf(t, big)[:objectstore.PartSize+2000] // cut inside the file
			}
			deployID := strings.ReplaceAll(tc.name, " ", "-")
			err := publishArchive(s, deployID, archive, lim)
			if tc.entries == nil {
				// A stream cut inside a file's bytes fails as Unpack's copy does (not as
				// unsafe); either way, nothing stays.
				if err == nil {
					t.Fatal("a truncated archive was published")
				}
			} else if !errors.Is(err, artifact.ErrUnsafe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want artifact.ErrUnsafe saying %q", err, tc.want)
			}
			if got := keys(t, s, revisionPrefix("app1", deployID)); len(got) != 0 {
				t.Fatalf("a refused site left %v", got)
			}
			res, err := core.ListMultipartUploads(context.Background(), bucket, "", "", "", "", 1000)
			if err != nil {
				t.Fatalf("list multipart uploads: %v", err)
			}
			if len(res.Uploads) != 0 {
				t.Fatalf("%d unfinished multipart uploads left behind", len(res.Uploads))
			}
		})
	}
}

// What the archive holds is what the site serves: folders add nothing, a later copy of a file
// replaces an earlier one, a name is cleaned, and the same archive unpacks to the same files.
func TestPublishFromArchiveMatchesUnpack(t *testing.T) {
	s, _, _ := streamStore(t)
	archive := tarOf(t,
		tarEntry{name: "./", typ: tar.TypeDir},
		tarEntry{name: "docs/", typ: tar.TypeDir},
		tarEntry{name: "./index.html", body: "old"},
		tarEntry{name: "docs//guide.md", body: "# guide"},
		tarEntry{name: "index.html", body: "<p>new</p>"},
		tarEntry{name: "blob", body: "\x89PNG\r\n\x1a\n0000"},
	)
	if err := publishArchive(s, "d1", archive, artifact.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	c, err := NewCache(s, t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newManifestCache(s, nil).load(context.Background(), manifestKey("app1", "d1"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() + "/site"
	if _, err := artifact.Unpack(bytes.NewReader(archive), false, dir, artifact.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"index.html": "<p>new</p>", "docs/guide.md": "# guide", "blob": "\x89PNG\r\n\x1a\n0000"}
	if len(m.Files) != len(want) {
		t.Fatalf("manifest holds %v, want %d files", m.Files, len(want))
	}
	for name, body := range want {
		if got := read(t, c, "app1", "d1", name); got != body {
			t.Errorf("%s: %q, want %q", name, got, body)
		}
		unpacked, err := artifact.ReadFile(dir, name, 1<<20)
		if err != nil || string(unpacked) != body {
			t.Errorf("%s unpacked: %q %v, want %q", name, unpacked, err, body)
		}
	}
	if m.Files["blob"].ContentType != "image/png" || m.Files["docs/guide.md"].ContentType == "" {
		t.Fatalf("content types: %+v", m.Files)
	}
}
