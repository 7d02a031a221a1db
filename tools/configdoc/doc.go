// Command configdoc writes docs/configuration.md from the configuration structs themselves:
// every `env:"NAME, default=…"` tag of each service's config package (and of the shared
// structs in pkg they embed) becomes a row with its default, whether it is required, and the
// field's doc comment. The prose above the generated part of that file is kept as it is.
//
// Run it from anywhere in the repository: `make docs` (or `cd tools/configdoc && go run .`).
// Its test fails when the committed file differs from what it would write.
package main
