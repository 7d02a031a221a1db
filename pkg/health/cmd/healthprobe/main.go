// Command healthprobe is a container's healthcheck where the image has no shell or curl
// (distroless): `healthprobe http://127.0.0.1:8101/readyz` exits 0 on a 200 within two
// seconds, 1 otherwise, saying why on stderr. The Dockerfile puts it in every image.
package main

import (
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: healthprobe URL")
		os.Exit(2)
	}
	if err := probe(os.Args[1], 2*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "healthprobe:", err)
		os.Exit(1)
	}
}

// probe GETs url and wants 200 within timeout.
func probe(url string, timeout time.Duration) error {
	c := http.Client{Timeout: timeout}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", url, resp.StatusCode)
	}
	return nil
}
