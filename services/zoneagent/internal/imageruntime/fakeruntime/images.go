package main

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// load reads a docker-archive tarball: manifest.json names the tags and the config file,
// whose labels are kept with the image.
func load(path string) {
	f, err := os.Open(path)
	if err != nil {
		fail(1, err.Error())
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fail(1, "invalid tar: "+err.Error())
		}
		if strings.HasSuffix(h.Name, ".json") || strings.HasPrefix(h.Name, "sha256:") {
			b, _ := io.ReadAll(tr)
			files[h.Name] = b
		}
	}
	var manifest []struct {
		Config   string
		RepoTags []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) == 0 {
		fail(1, "no manifest.json in the archive")
	}
	var config struct {
		Config struct{ Labels map[string]string } `json:"config"`
	}
	if err := json.Unmarshal(files[manifest[0].Config], &config); err != nil {
		fail(1, "no image config in the archive")
	}
	labels, _ := json.Marshal(config.Config.Labels)
	for _, tag := range manifest[0].RepoTags {
		os.WriteFile(imageFile(tag), labels, 0o600)
		fmt.Println("Loaded image: " + tag)
	}
}
