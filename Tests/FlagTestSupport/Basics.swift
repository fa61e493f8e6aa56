// The helpers without the server come with this module, so that a test of the server, the client or flagctl
// imports one module for all of its support.
@_exported import FlagTestBasics
