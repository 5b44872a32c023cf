/// sb.http: the HTTP/1.x request parser of the parsed scenarios (plaintext, work, counter, file) and
/// the answers to a connection's pipelined requests, shared by every D contestant.
module sb.http;

import core.stdc.time : time_t, tm, strftime;
import core.sys.posix.time : gmtime_r;
import std.ascii : isUpper, toLower;
import std.format : sformat;
import std.string : indexOf;

import sb.args : Scenario;
import sb.handlers;

enum bufBytes = 16_384; /// a connection's request buffer, and its answer buffer
enum responseMaxBytes = 192; /// the longest single answer

struct Request {
    bool get, http10;
    bool keepAlive;     /// HTTP/1.1: unless it says Connection: close; HTTP/1.0: if it says keep-alive
    const(char)[] path; /// the target without its query
}

/// Parses one request at the start of `p` into `r`: its length, 0 while incomplete, -1 if malformed or
/// larger than bufBytes.
long parseRequest(const(char)[] p, ref Request r)
{
    auto headEnd = p.indexOf("\r\n\r\n");
    if (headEnd < 0) return p.length >= bufBytes ? -1 : 0;
    auto head = p[0 .. headEnd + 2]; // up to the last header's CRLF
    size_t q = 0;
    while (q < head.length && isUpper(head[q])) q++;
    auto method = head[0 .. q];
    if (method.length == 0 || q == head.length || head[q++] != ' ') return -1;
    size_t pathStart = q;
    while (q < head.length && head[q] > ' ' && head[q] < 127) q++;
    auto target = head[pathStart .. q];
    auto query = target.indexOf('?');
    auto version_ = head[q .. $];
    if (target.length == 0 || version_.length < 11 || version_[0 .. 8] != " HTTP/1." || (version_[8] != '0' && version_[8] != '1')
        || version_[9 .. 11] != "\r\n") return -1;
    r.http10 = version_[8] == '0';
    r.keepAlive = !r.http10;
    size_t body = 0;
    foreach (line; lines(version_[11 .. $])) { // header lines: name ':' value
        auto colon = line.indexOf(':');
        if (colon <= 0) return -1;
        auto name = line[0 .. colon];
        foreach (ch; name) if (ch <= ' ' || ch >= 127) return -1;
        auto value = trim(line[colon + 1 .. $]);
        if (asciiEquals(name, "content-length")) {
            if (value.length == 0 || value.length > 5) return -1;
            foreach (ch; value) {
                if (ch < '0' || ch > '9') return -1;
                body = body * 10 + (ch - '0');
            }
            if (body > bufBytes) return -1;
        } else if (asciiEquals(name, "connection")) {
            if (asciiEquals(value, "close")) r.keepAlive = false;
            if (asciiEquals(value, "keep-alive")) r.keepAlive = true;
        } else if (asciiEquals(name, "transfer-encoding")) {
            return -1; // no request here has a chunked body
        }
    }
    size_t total = headEnd + 4 + body;
    if (total > bufBytes) return -1;
    r.get = method == "GET";
    r.path = query < 0 ? target : target[0 .. query];
    return total > p.length ? 0 : total;
}

/// The CRLF-terminated lines of `s`.
private auto lines(const(char)[] s)
{
    struct Lines {
        const(char)[] rest, front;
        bool empty;
        this(const(char)[] s) { rest = s; popFront(); }
        void popFront()
        {
            auto end = rest.indexOf("\r\n");
            empty = end < 0;
            if (!empty) front = rest[0 .. end], rest = rest[end + 2 .. $];
        }
    }
    return Lines(s);
}

/// Whether `s` is `lower` up to ASCII case (bytes, never decoded: a request may hold any bytes).
private bool asciiEquals(const(char)[] s, string lower)
{
    if (s.length != lower.length) return false;
    foreach (i, ch; s) if (toLower(ch) != lower[i]) return false;
    return true;
}

private const(char)[] trim(const(char)[] v)
{
    while (v.length && (v[0] == ' ' || v[0] == '\t')) v = v[1 .. $];
    while (v.length && (v[$ - 1] == ' ' || v[$ - 1] == '\t')) v = v[0 .. $ - 1];
    return v;
}

/// plaintext's answers, whose Date header is rebuilt once per second (one set per worker); [1]: for
/// an HTTP/1.0 request that keeps its connection (with Connection: keep-alive).
struct PlaintextAnswers {
    enum { ok, notFound, bad }
    char[responseMaxBytes][3][2] bytes;
    size_t[3][2] lengths;
    time_t dateS;

    void refresh(time_t nowS)
    {
        if (nowS == dateS) return;
        dateS = nowS;
        tm t;
        char[40] date;
        auto dateLen = strftime(date.ptr, date.length, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&nowS, &t));
        static immutable status = ["200 OK", "404 Not Found", "400 Bad Request"];
        static immutable body = ["Hello, World!", "", ""];
        foreach (k; 0 .. 2)
            foreach (i; 0 .. 3)
                lengths[k][i] = sformat(bytes[k][i][], "HTTP/1.1 %s\r\nServer: d\r\nDate: %s\r\n%sContent-Type: text/plain\r\nContent-Length: %s\r\n\r\n%s",
                    status[i], date[0 .. dateLen], i == bad ? "Connection: close\r\n" : k ? connectionKeepAlive : "",
                    body[i].length, body[i]).length;
    }
}

/// What `answer` did with a connection's input.
struct Answered {
    size_t used;     /// request bytes answered (to drop from the input)
    size_t outBytes; /// answer bytes appended to the output
    bool close;      /// close once the output is written (bad request, or the client asked)
    bool file;       /// file: the last answer's head is out; fileBytes of the file follow it
}

/// Answers the complete requests at the start of `input`, in order, while `output` has room for another
/// answer; a file answer ends the batch, as its body is sent from the file after the head.
Answered answer(Scenario s, ref const PlaintextAnswers plain, const(char)[] input, char[] output)
{
    Answered a;
    while (!a.close && !a.file && a.outBytes + responseMaxBytes <= output.length) {
        Request rq;
        long n = parseRequest(input[a.used .. $], rq);
        if (n == 0) break;
        bool bad = n < 0, keepAliveHeader = !bad && rq.http10 && rq.keepAlive;
        auto o = output[a.outBytes .. $];
        size_t len;
        void put(const(char)[] bytes) { o[0 .. bytes.length] = bytes; len = bytes.length; }
        if (s == Scenario.plaintext) {
            auto i = bad ? plain.bad : rq.get && rq.path == "/plaintext" ? plain.ok : plain.notFound;
            put(plain.bytes[keepAliveHeader][i][0 .. plain.lengths[keepAliveHeader][i]]);
        } else if (bad || !rq.get) { // work, counter, file
            put(badRequest);
            bad = true;
        } else {
            len = answerPath(s, rq.path, keepAliveHeader, o, bad, a.file);
        }
        a.outBytes += len;
        a.close = bad || !rq.keepAlive;
        a.used += bad ? 0 : n;
    }
    return a;
}
