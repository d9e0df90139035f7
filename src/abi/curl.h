/* lua-mcp's own declarations of the part of libcurl's API that the core uses, written from
 * libcurl's documentation (the man pages of each function, option and info, which give the
 * prototypes, and the values of the option, info and code numbers, which are fixed ABI: libcurl
 * never renumbers them). The core never links libcurl: it opens it at run time and calls
 * through a table of entry points (transports/curl_api.h), so these declarations only have to
 * describe the calls. See README.md in this directory; `make check-abi` compares every value and
 * layout here with the installed <curl/curl.h>, and each prototype with the real one. */
#ifndef MCP_ABI_CURL_H
#define MCP_ABI_CURL_H

#include <stdint.h>
#include <sys/socket.h>

#ifndef MCP_ABI_PROTOTYPES_ONLY

/* ---- handles and scalar types ---- */
typedef void CURL;                     /* an easy handle */
typedef void CURLM;                    /* a multi handle */
typedef struct mcp_abi_curl_url CURLU; /* opaque */
typedef int64_t curl_off_t;
typedef int curl_socket_t; /* POSIX: a file descriptor */

/* The enumerations are ints in the ABI: the core only needs these names to be ints and the
 * numbers below. */
typedef int CURLcode;
typedef int CURLMcode;
typedef int CURLUcode;
typedef int CURLoption;
typedef int CURLMoption;
typedef int CURLINFO;
typedef int CURLUPart;
typedef int CURLMSG;
typedef int curlsocktype;

struct curl_slist {
    char *data;
    struct curl_slist *next;
};

/* What curl_multi_info_read returns. */
typedef struct CURLMsg {
    CURLMSG msg;
    CURL *easy_handle;
    union {
        void *whatever;
        CURLcode result;
    } data;
} CURLMsg;

/* What CURLOPT_OPENSOCKETFUNCTION's callback receives. */
struct curl_sockaddr {
    int family;
    int socktype;
    int protocol;
    unsigned int addrlen;
    struct sockaddr addr;
};

/* ---- result codes ---- */
#define CURLE_OK 0
#define CURLE_COULDNT_CONNECT 7
#define CURLE_OPERATION_TIMEDOUT 28
#define CURLM_OK 0
#define CURLUE_OK 0

/* ---- curl_global_init ---- */
#define CURL_GLOBAL_DEFAULT 3L /* SSL | WIN32 ("all") */

/* ---- easy options: a type base (long 0, pointer 10000, function 20000, curl_off_t 30000)
 * plus the option's number ---- */
#define CURLOPT_WRITEDATA 10001
#define CURLOPT_URL 10002
#define CURLOPT_PROXY 10004
#define CURLOPT_PROXYUSERPWD 10006
#define CURLOPT_ERRORBUFFER 10010
#define CURLOPT_WRITEFUNCTION 20011
#define CURLOPT_POSTFIELDS 10015
#define CURLOPT_USERAGENT 10018
#define CURLOPT_LOW_SPEED_LIMIT 19
#define CURLOPT_LOW_SPEED_TIME 20
#define CURLOPT_HTTPHEADER 10023
#define CURLOPT_SSLCERT 10025
#define CURLOPT_KEYPASSWD 10026
#define CURLOPT_HEADERDATA 10029
#define CURLOPT_CUSTOMREQUEST 10036
#define CURLOPT_VERBOSE 41
#define CURLOPT_NOPROGRESS 43
#define CURLOPT_NOBODY 44
#define CURLOPT_POST 47
#define CURLOPT_FOLLOWLOCATION 52
#define CURLOPT_FRESH_CONNECT 74
#define CURLOPT_XFERINFODATA 10057
#define CURLOPT_INTERFACE 10062
#define CURLOPT_SSL_VERIFYPEER 64
#define CURLOPT_CAINFO 10065
#define CURLOPT_HEADERFUNCTION 20079
#define CURLOPT_HTTPGET 80
#define CURLOPT_SSL_VERIFYHOST 81
#define CURLOPT_HTTP_VERSION 84
#define CURLOPT_SSLCERTTYPE 10086
#define CURLOPT_SSLKEY 10087
#define CURLOPT_SSLKEYTYPE 10088
#define CURLOPT_CAPATH 10097
#define CURLOPT_NOSIGNAL 99
#define CURLOPT_PRIVATE 10103
#define CURLOPT_IPRESOLVE 113
#define CURLOPT_POSTFIELDSIZE_LARGE 30120
#define CURLOPT_TIMEOUT_MS 155
#define CURLOPT_CONNECTTIMEOUT_MS 156
#define CURLOPT_OPENSOCKETFUNCTION 20163
#define CURLOPT_OPENSOCKETDATA 10164
#define CURLOPT_CLOSESOCKETFUNCTION 20208
#define CURLOPT_CLOSESOCKETDATA 10209
#define CURLOPT_CRLFILE 10169
#define CURLOPT_RESOLVE 10203
#define CURLOPT_NOPROXY 10177
#define CURLOPT_TCP_KEEPALIVE 213
#define CURLOPT_TCP_KEEPIDLE 214
#define CURLOPT_TCP_KEEPINTVL 215
#define CURLOPT_XFERINFOFUNCTION 20219
#define CURLOPT_PINNEDPUBLICKEY 10230
#define CURLOPT_UNIX_SOCKET_PATH 10231
#define CURLOPT_PROXY_CAINFO 10246
#define CURLOPT_PROXY_SSL_VERIFYPEER 248
#define CURLOPT_PROXY_SSL_VERIFYHOST 249
#define CURLOPT_ABSTRACT_UNIX_SOCKET 10264
#define CURLOPT_PROTOCOLS_STR 10318
#define CURLOPT_REDIR_PROTOCOLS_STR 10319
#define CURLOPT_CURLU 10282

#define CURL_ERROR_SIZE 256 /* the size CURLOPT_ERRORBUFFER's buffer must have */

/* ---- easy infos: a type base (string 0x100000, long 0x200000, curl_off_t 0x600000) plus the
 * info's number ---- */
#define CURLINFO_EFFECTIVE_URL 0x100001
#define CURLINFO_RESPONSE_CODE 0x200002
#define CURLINFO_CONTENT_TYPE 0x100012
#define CURLINFO_PRIVATE 0x100015
#define CURLINFO_REDIRECT_URL 0x10001f
#define CURLINFO_CONTENT_LENGTH_DOWNLOAD_T 0x60000f

/* ---- the multi interface ---- */
#define CURLMOPT_SOCKETFUNCTION 20001
#define CURLMOPT_SOCKETDATA 10002
#define CURLMOPT_TIMERFUNCTION 20004
#define CURLMOPT_TIMERDATA 10005

#define CURLMSG_DONE 1

#define CURL_SOCKET_BAD (-1)
#define CURL_SOCKET_TIMEOUT CURL_SOCKET_BAD

#define CURL_POLL_IN 1 /* what the socket callback is asked to watch */
#define CURL_POLL_OUT 2
#define CURL_POLL_INOUT 3
#define CURL_POLL_REMOVE 4

#define CURL_CSELECT_IN 0x01 /* what curl_multi_socket_action is told happened */
#define CURL_CSELECT_OUT 0x02
#define CURL_CSELECT_ERR 0x04

/* ---- the URL API ---- */
#define CURLUPART_URL 0
#define CURLUPART_SCHEME 1
#define CURLUPART_HOST 5
#define CURLUPART_PORT 6

#define CURLU_DEFAULT_PORT (1 << 0)
#define CURLU_NON_SUPPORT_SCHEME (1 << 3)
#define CURLU_GUESS_SCHEME (1 << 9)

#endif /* MCP_ABI_PROTOTYPES_ONLY */

CURLcode curl_global_init(long flags);

CURL *curl_easy_init(void);
CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...);
CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...);
void curl_easy_cleanup(CURL *curl);
const char *curl_easy_strerror(CURLcode code);

CURLM *curl_multi_init(void);
CURLMcode curl_multi_setopt(CURLM *multi_handle, CURLMoption option, ...);
CURLMcode curl_multi_cleanup(CURLM *multi_handle);
CURLMcode curl_multi_add_handle(CURLM *multi_handle, CURL *curl_handle);
CURLMcode curl_multi_remove_handle(CURLM *multi_handle, CURL *curl_handle);
CURLMcode curl_multi_assign(CURLM *multi_handle, curl_socket_t sockfd, void *sockp);
CURLMcode curl_multi_socket_action(CURLM *multi_handle, curl_socket_t s, int ev_bitmask,
                                   int *running_handles);
CURLMsg *curl_multi_info_read(CURLM *multi_handle, int *msgs_in_queue);

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *string);
void curl_slist_free_all(struct curl_slist *list);

CURLU *curl_url(void);
CURLUcode curl_url_set(CURLU *handle, CURLUPart what, const char *part, unsigned int flags);
CURLUcode curl_url_get(CURLU *handle, CURLUPart what, char **part, unsigned int flags);
void curl_url_cleanup(CURLU *handle);
void curl_free(void *p);

#endif
