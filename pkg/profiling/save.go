package profiling

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// SaveCPU takes a CPU profile of seconds from the profile server at addr (a service's
// PROFILE_ADDR) and writes it to file, making its folder: what a benchmark does while its
// load runs.
func SaveCPU(addr string, seconds int, file string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds)
	resp, err := http.Get(url)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("profile %s: %d %s", url, resp.StatusCode, body)
	}
	if err == nil {
		err = os.MkdirAll(filepath.Dir(file), 0o755)
	}
	if err == nil {
		err = os.WriteFile(file, body, 0o644)
	}
	return err
}
