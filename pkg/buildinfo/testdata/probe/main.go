// Command probe prints buildinfo.Line when asked for its version: the stamping test builds
// it with and without scripts/ldflags.sh's flags.
package main

import (
	"fmt"
	"os"

	"tori.dev/pkg/buildinfo"
)

func main() {
	if buildinfo.Asked(os.Args[1:]) {
		fmt.Println(buildinfo.Line("probe"))
	}
}
