package e2e

import (
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"testing"

	"tori.dev/tests/e2e/harness"
)

// benchSite is the static site `make bench-edge` serves from both edges: 1,000 files on disk
// (Caddy's root), deployed as they are to Tori. The pages are small HTML, the images 100 kB
// of random bytes (nothing to gain from compression on either side), and one 5 MB download.
type benchSite struct {
	dir   string
	sizes map[string]int64 // URL path ("/pages/0001.html") → size in bytes
	page  string           // the small file wrk asks for
	imgs  []string         // the 100 kB files wrk goes round
}

const (
	benchSitePages     = 798
	benchSiteImages    = 200
	benchSiteImageSize = 100_000
	benchSiteBigSize   = 5_000_000
)

func writeBenchSite(b *testing.B, dir string) *benchSite {
	b.Helper()
	site := &benchSite{dir: dir, sizes: map[string]int64{}}
	rng := rand.NewChaCha8([32]byte{'t', 'o', 'r', 'i'})
	write := func(name string, body []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			b.Fatal(err)
		}
		site.sizes["/"+name] = int64(len(body))
	}
	write("index.html", []byte(benchPage("Bench site", "The site make bench-edge serves.")))
	for i := 1; i <= benchSitePages; i++ {
		name := fmt.Sprintf("pages/%04d.html", i)
		write(name, []byte(benchPage(fmt.Sprintf("Page %d", i), fmt.Sprintf("Page %d of %d, with a picture: <img src=\"/img/%03d.jpg\">", i, benchSitePages, i%benchSiteImages+1))))
	}
	img := make([]byte, benchSiteImageSize)
	for i := 1; i <= benchSiteImages; i++ {
		rng.Read(img)
		name := fmt.Sprintf("img/%03d.jpg", i)
		write(name, img)
		site.imgs = append(site.imgs, "/"+name)
	}
	big := make([]byte, benchSiteBigSize)
	rng.Read(big)
	write("download/archive.bin", big)
	if len(site.sizes) != 1000 {
		b.Fatalf("the bench site has %d files, want 1000", len(site.sizes))
	}
	site.page = "/pages/0001.html"
	return site
}

func benchPage(title, text string) string {
	return fmt.Sprintf("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title></head>\n<body><h1>%s</h1><p>%s</p></body></html>\n", title, title, text)
}

// deploy streams every file of the site as one static deploy, as the CLI sends a folder.
func (site *benchSite) deploy(b *testing.B, s *harness.Stack, token, slug string) *harness.Response {
	b.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		for name := range site.sizes {
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files"; filename=%q`, name[1:]))
			part, err := mw.CreatePart(h)
			if err == nil {
				err = copyFile(part, filepath.Join(site.dir, filepath.FromSlash(name[1:])))
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	return s.Do(b, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: token, Body: pr,
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
