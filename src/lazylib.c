#include "lazylib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The one list of file names per library, the first that loads wins: the ELF soname of each ABI
 * we call (libcrypto 3 and 1.1 both have every entry point crypto_api.h lists), the development
 * link, then macOS's names. macOS: never the unversioned libcrypto.dylib, which there is the
 * system's stub that aborts the process loading it ("loading libcrypto in an unsafe way"); only
 * versioned names, by the install names of Homebrew (Apple silicon, then Intel) and MacPorts
 * after the plain name (a DYLD_LIBRARY_PATH, or a library beside the interpreter). The system's
 * libcurl is a real library. */
static const char *const curl_names[] = {"libcurl.so.4", "libcurl.so", "libcurl.4.dylib",
                                         "libcurl.dylib", NULL};
static const char *const crypto_names[] = {"libcrypto.so.3",
                                           "libcrypto.so.1.1",
                                           "libcrypto.so",
                                           "libcrypto.3.dylib",
                                           "/opt/homebrew/opt/openssl@3/lib/libcrypto.3.dylib",
                                           "/usr/local/opt/openssl@3/lib/libcrypto.3.dylib",
                                           "/opt/local/lib/libcrypto.3.dylib",
                                           "libcrypto.1.1.dylib",
                                           "/opt/homebrew/opt/openssl@1.1/lib/libcrypto.1.1.dylib",
                                           "/usr/local/opt/openssl@1.1/lib/libcrypto.1.1.dylib",
                                           NULL};

const char *const *mcp_lazylib_names(mcp_lazylib_id id)
{
    return id == MCP_LIBCURL ? curl_names : crypto_names;
}

void mcp_lazylib_fill(mcp_lazylib *lib)
{
    const char *const *names = mcp_lazylib_names(lib->id);
    const char *const *n;
    const mcp_lazysym *sym;
    void *handle = NULL;
    for (n = names; *n != NULL && handle == NULL; n++) {
        handle = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
        /* the reason is the first name's (the soname we are built for); dlerror's text is
         * overwritten by the next failure, so it is kept now */
        if (handle == NULL && n == names) {
            const char *why = dlerror();
            snprintf(lib->err, sizeof lib->err, "cannot load %s (%s)", names[0],
                     why ? why : "not found");
        }
    }
    if (handle == NULL)
        return;
    for (sym = lib->syms; sym->name != NULL; sym++) {
        /* POSIX: a data pointer from dlsym may be converted to a function pointer. */
        void *p = dlsym(handle, sym->name);
        if (p == NULL) {
            snprintf(lib->err, sizeof lib->err, "%s has no %s: the library is too old",
                     n[-1], /* the name that loaded */
                     sym->name);
            return;
        }
        memcpy(sym->slot, &p, sizeof p);
    }
    /* Never closed: the entry points stay valid for the life of the process, like a linked one. */
    lib->rc = lib->init != NULL ? lib->init(lib->err, sizeof lib->err) : 0;
}

int mcp_lazylib_open(mcp_lazylib *lib, char *err, size_t errlen)
{
    pthread_once(&lib->once, lib->once_fn);
    if (lib->rc != 0)
        snprintf(err, errlen, "%s", lib->err);
    return lib->rc;
}
