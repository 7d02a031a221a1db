package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func networkFile(name string) string { return filepath.Join(state, "networks", name) }

// network creates or removes a network, remembering its bridge interface.
func network(args []string) {
	if len(args) < 2 {
		fail(125, "usage: network create|rm …")
	}
	name := args[len(args)-1]
	switch args[0] {
	case "create":
		bridge := ""
		for i := 1; i < len(args)-1; i++ {
			switch {
			case args[i] == "--driver" && i+1 < len(args)-1 && args[i+1] == "bridge":
				i++
			case args[i] == "--opt" && i+1 < len(args)-1 && strings.HasPrefix(args[i+1], "com.docker.network.bridge.name="):
				bridge = strings.TrimPrefix(args[i+1], "com.docker.network.bridge.name=")
				i++
			default:
				fail(125, "unknown flag: "+args[i])
			}
		}
		if bridge == "" || len(bridge) > 15 {
			fail(125, "fakeruntime: network create needs --opt com.docker.network.bridge.name=<at most 15 bytes>")
		}
		if name == "host" || name == "bridge" || name == "none" {
			fail(1, "network with name "+name+" already exists")
		}
		if _, err := os.Stat(networkFile(name)); err == nil {
			fail(1, "network with name "+name+" already exists")
		}
		os.WriteFile(networkFile(name), []byte(bridge), 0o600)
		fmt.Println(name)
	case "rm":
		if _, err := os.Stat(networkFile(name)); err != nil {
			fail(1, "Error: No such network: "+name)
		}
		entries, _ := os.ReadDir(filepath.Join(state, "containers"))
		for _, e := range entries {
			if c, ok := strings.CutSuffix(e.Name(), ".net"); ok && running(c) {
				if b, _ := os.ReadFile(filepath.Join(state, "containers", e.Name())); string(b) == name {
					fail(1, "error while removing network: network "+name+" has active endpoints")
				}
			}
		}
		os.Remove(networkFile(name))
		fmt.Println(name)
	default:
		fail(125, "unknown command network "+args[0])
	}
}
