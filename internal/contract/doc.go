// Package contract checks tool arguments and answers, and the configuration and conventions
// documents, against the published schemas, through the validators the generator emits into
// gen (one function per schema node; no schema is compiled at run time). Its field errors are
// the generated gen.ErrorField, the type a tool error carries.
package contract
