// Package env is an app's environment variables: the rules of names and values, the masked
// view the API shows, and the sealing that keeps plaintext out of every table. Values are
// encrypted by a keyring.Keyring bound to (app id, variable name) before they reach the
// store, and leave the service only inside a request/reply answer to a deploy.
package env
