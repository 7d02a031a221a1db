package artifact

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// blockDevice makes a block device named name in dir (as root, which CI is), or points
// at one of the host's /dev when mknod is not allowed here.
func blockDevice(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	if err := syscall.Mknod(filepath.Join(dir, name), syscall.S_IFBLK|0o600, 7<<8); err == nil {
		return dir, name
	}
	entries, _ := os.ReadDir("/dev")
	for _, e := range entries {
		if e.Type()&fs.ModeDevice != 0 && e.Type()&fs.ModeCharDevice == 0 {
			return "/dev", e.Name()
		}
	}
	t.Fatal("no block device to test with: run as root")
	return "", ""
}

func TestReadFileRefusesAnythingButARegularFileInside(t *testing.T) {
	const max = 64
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string) (root, name string) // the tree and the file read
		says string                                             // "" means the read succeeds
	}{
		{"regular file", func(t *testing.T, dir string) (string, string) {
			os.WriteFile(filepath.Join(dir, "tori.json"), []byte(`{"start":"x"}`), 0o644)
			return dir, "tori.json"
		}, ""},
		{"missing", func(t *testing.T, dir string) (string, string) { return dir, "tori.json" }, "not exist"},
		{"link inside", func(t *testing.T, dir string) (string, string) {
			os.WriteFile(filepath.Join(dir, "real.json"), []byte(`{}`), 0o644)
			os.Symlink("real.json", filepath.Join(dir, "tori.json"))
			return dir, "tori.json"
		}, "tori.json is a link"},
		{"link to /dev/zero", func(t *testing.T, dir string) (string, string) {
			os.Symlink("/dev/zero", filepath.Join(dir, "tori.json"))
			return dir, "tori.json"
		}, "tori.json is a link"},
		{"link to a host file", func(t *testing.T, dir string) (string, string) {
			os.Symlink("../../../../../../etc/passwd", filepath.Join(dir, "tori.json"))
			return dir, "tori.json"
		}, "tori.json is a link"},
		{"path out of the tree", func(t *testing.T, dir string) (string, string) { return dir, "../../etc/passwd" }, "escapes"},
		{"folder link out of the tree", func(t *testing.T, dir string) (string, string) {
			os.Symlink("/etc", filepath.Join(dir, "conf"))
			return dir, "conf/passwd"
		}, "escapes"},
		{"fifo", func(t *testing.T, dir string) (string, string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "tori.json"), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir, "tori.json"
		}, "tori.json is a FIFO"},
		{"socket", func(t *testing.T, dir string) (string, string) {
			l, err := net.Listen("unix", filepath.Join(dir, "tori.json"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			return dir, "tori.json"
		}, "tori.json is a socket"},
		{"char device", func(t *testing.T, dir string) (string, string) { return "/dev", "zero" }, "zero is a device"},
		{"block device", func(t *testing.T, dir string) (string, string) { return blockDevice(t, dir, "sda") }, "is a device"},
		{"folder", func(t *testing.T, dir string) (string, string) {
			os.Mkdir(filepath.Join(dir, "tori.json"), 0o755)
			return dir, "tori.json"
		}, "tori.json is a folder"},
		{"huge", func(t *testing.T, dir string) (string, string) {
			os.WriteFile(filepath.Join(dir, "tori.json"), []byte(strings.Repeat("x", max+1)), 0o644)
			return dir, "tori.json"
		}, "larger than 64 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, name := tc.make(t, t.TempDir())
			done := make(chan struct{})
			var b []byte
			var err error
			go func() {
				defer close(done)
				b, err = ReadFile(root, name, max)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the read blocked")
			}
			switch {
			case tc.says == "" && (err != nil || string(b) != `{"start":"x"}`):
				t.Fatalf("read %q, %v", b, err)
			case tc.says == "":
			case err == nil || !strings.Contains(err.Error(), tc.says):
				t.Fatalf("got %q, %v; want an error saying %q", b, err, tc.says)
			case tc.says == "not exist" && !errors.Is(err, fs.ErrNotExist):
				t.Fatalf("a missing file is %v", err)
			case tc.says != "not exist" && !errors.Is(err, ErrUnsafe):
				t.Fatalf("%v is not ErrUnsafe", err)
			case root != "/dev" && strings.Contains(err.Error(), root):
				t.Fatalf("the error shows a host path: %v", err)
			}
		})
	}
}
