// Command vault is the upstream Vault CLI and server, built from the module
// cache because no Vault package exists for this machine. Only tests and local
// development use it (`vault server -dev`).
package main

import (
	"os"

	"github.com/hashicorp/vault/command"
)

func main() {
	os.Exit(command.Run(os.Args[1:]))
}
