package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/bus/brokeradmin"
)

// writeDefinitions writes a RabbitMQ definitions file with the users (their passwords only as
// salted hashes) and permissions, for a broker that loads it at start (compose, Kubernetes):
// there is no rabbitmqctl next to the bootstrap there.
func writeDefinitions(path, vhost string, users []brokeradmin.User) error {
	type user struct {
		Name             string   `json:"name"`
		PasswordHash     string   `json:"password_hash"`
		HashingAlgorithm string   `json:"hashing_algorithm"`
		Tags             []string `json:"tags"`
	}
	type permission struct {
		User      string `json:"user"`
		VHost     string `json:"vhost"`
		Configure string `json:"configure"`
		Write     string `json:"write"`
		Read      string `json:"read"`
	}
	type topicPermission struct {
		User     string `json:"user"`
		VHost    string `json:"vhost"`
		Exchange string `json:"exchange"`
		Write    string `json:"write"`
		Read     string `json:"read"`
	}
	var defs struct {
		Users            []user              `json:"users"`
		VHosts           []map[string]string `json:"vhosts"`
		Permissions      []permission        `json:"permissions"`
		TopicPermissions []topicPermission   `json:"topic_permissions"`
	}
	defs.VHosts = []map[string]string{{"name": vhost}}
	for _, u := range users {
		defs.Users = append(defs.Users, user{Name: u.Name, PasswordHash: rabbitHash(u.Password), HashingAlgorithm: "rabbit_password_hashing_sha256", Tags: append([]string{}, bus.TagsOf(u.Principal)...)})
		p := bus.PermissionsOf(u.Principal)
		defs.Permissions = append(defs.Permissions, permission{User: u.Name, VHost: vhost, Configure: p.Configure, Write: p.Write, Read: p.Read})
		defs.TopicPermissions = append(defs.TopicPermissions, topicPermission{User: u.Name, VHost: vhost, Exchange: "tori.events", Write: bus.TopicWrite(u.Principal), Read: bus.TopicRead(u.Principal)})
	}
	b, err := json.MarshalIndent(defs, "", "  ")
	if err != nil {
		return err
	}
	// Readable by the broker's own user (compose mounts the file into it): it holds only
	// salted hashes of 128-bit random passwords.
	return writeFile(path, b, 0o644)
}

// rabbitHash is RabbitMQ's rabbit_password_hashing_sha256: base64(salt ‖ sha256(salt ‖ password)).
func rabbitHash(password string) string {
	salt := make([]byte, 4)
	if _, err := rand.Read(salt); err != nil {
		panic(err)
	}
	sum := sha256.Sum256(append(append([]byte{}, salt...), password...))
	return base64.StdEncoding.EncodeToString(append(salt, sum[:]...))
}
