"""What every request passes through, whatever its route: the body's size limit (`bodies`),
cross-origin requests (`cors`), security headers (`security`), the client's address behind
proxies (`proxies`), rate limits (`limits`), the request id, logs and metrics
(`instrumentation`), and who the caller is (`tenancy`)."""
