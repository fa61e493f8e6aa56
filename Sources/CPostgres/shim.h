// libpq, PostgreSQL's client library: Debian's libpq-dev installs it under postgresql/.
#include <postgresql/libpq-fe.h>
