// Package contract is the JSON Schema validator the server checks tool arguments and answers
// with, and the configuration and conventions documents, against the published schemas. Its
// field errors are the generated gen.ErrorField, the type a tool error carries.
package contract
