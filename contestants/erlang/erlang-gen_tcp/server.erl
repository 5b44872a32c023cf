%% gen_tcp with a process per connection: a pool of acceptors waits on one listen socket; each
%% acceptor that gets a connection starts its replacement and serves that connection itself.
%% The BEAM schedulers (erl +S Workers:Workers) run the processes and steal work from each other.
%% work, counter and file parse HTTP/1.1 requests from the bytes read (keep-alive, pipelined).
-module(server).
-export([main/1]).

-include_lib("kernel/include/file.hrl").

-define(HELLO, <<"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!">>).
-define(READ_BYTES, 65536).
-define(ECHO_READ_BYTES, 512). % echo reads into a 512-byte buffer
-define(BAD_REQUEST, <<"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n">>).
-define(NOT_FOUND, <<"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n">>).
-define(MAX_HEAD_BYTES, 8192).  % a longer request head is a 400
-define(COUNTERS, counters).   % the ETS table of the counter scenario
-define(COUNTER_KEYS, 65536).
-define(WORK_GAP_NS, 50000).   % work: a longer spin step means the process was not running: not counted

%% Called by `erl -run server main Scenario Host Port Workers`.
main([Scenario, Host, Port, _Workers]) ->
    {Reply, Timeout} = scenario(Scenario),
    {ok, Ip} = inet:parse_address(Host),
    Options = [binary, {active, false}, {ip, Ip}, {reuseaddr, true}, {backlog, 1024},
               {nodelay, true}, {buffer, read_bytes(Scenario)},
               {send_timeout, Timeout}, {send_timeout_close, true}],
    %% The listen socket lives as long as the process that opened it, so not in this boot-time call.
    spawn(fun() ->
        case gen_tcp:listen(list_to_integer(Port), Options) of
            {ok, Listen} ->
                tables(Scenario),
                [spawn(fun() -> acceptor(Listen, Reply, Timeout) end)
                 || _ <- lists:seq(1, erlang:system_info(schedulers))],
                receive after infinity -> ok end;
            {error, Reason} ->
                io:format(standard_error, "listen on ~s:~s: ~p~n", [Host, Port, Reason]),
                halt(1)
        end
    end);
main(_) ->
    io:format(standard_error, "usage: server <scenario> <host> <port> <workers>~n", []),
    halt(2).

scenario("hello") -> {fun(_Data) -> ?HELLO end, infinity};
scenario("hello-timeout") -> {fun(_Data) -> ?HELLO end, timeout_ms()};
scenario("echo") -> {fun(Data) -> Data end, infinity};
scenario("work") -> {{http, fun work/1}, infinity};
scenario("counter") -> {{http, fun counter/1}, infinity};
scenario("file") -> {{http, file_route(files_folder())}, infinity};
scenario(Other) ->
    io:format(standard_error, "unsupported scenario: ~s~n", [Other]),
    halt(2).

%% The driver's user-level receive buffer: recv(Socket, 0) returns at most this many bytes, as one
%% read(2) of at most this many. Not recbuf, which sizes the kernel's buffer and the TCP window.
read_bytes("echo") -> ?ECHO_READ_BYTES;
read_bytes(_) -> ?READ_BYTES.

timeout_ms() -> list_to_integer(os:getenv("SB_TIMEOUT_MS", "5000")).

acceptor(Listen, Reply, Timeout) ->
    case gen_tcp:accept(Listen) of
        {ok, Socket} ->
            spawn(fun() -> acceptor(Listen, Reply, Timeout) end),
            case Reply of
                {http, Route} -> http(Socket, Route, <<>>);
                _ -> serve(Socket, Reply, Timeout)
            end;
        {error, closed} ->
            ok;
        {error, _} ->  % e.g. emfile: keep accepting
            acceptor(Listen, Reply, Timeout)
    end.

%% After each read, one send of the reply; on a read timeout, a send timeout or an error, close.
serve(Socket, Reply, Timeout) ->
    case gen_tcp:recv(Socket, 0, Timeout) of
        {ok, Data} ->
            case gen_tcp:send(Socket, Reply(Data)) of
                ok -> serve(Socket, Reply, Timeout);
                {error, _} -> gen_tcp:close(Socket)
            end;
        {error, _} ->
            gen_tcp:close(Socket)
    end.

%% counter: one public ETS table of 65,536 {Key, Count} rows, owned by the listening process (which
%% lives as long as the server), updated in place by ets:update_counter/3 from every connection.
tables("counter") ->
    ?COUNTERS = ets:new(?COUNTERS, [set, public, named_table, {write_concurrency, true}]),
    true = ets:insert(?COUNTERS, [{Key, 0} || Key <- lists:seq(0, ?COUNTER_KEYS - 1)]);
tables(_) ->
    ok.

%% work and counter: after each read, every complete request head in the buffer is answered in
%% order, in one send; a 400 closes the connection.
http(Socket, Route, Buffer) ->
    case gen_tcp:recv(Socket, 0) of
        {ok, Data} ->
            {Next, Replies} = answer(<<Buffer/binary, Data/binary>>, Route, []),
            case {send(Socket, Replies), Next} of
                {ok, {more, Rest}} -> http(Socket, Route, Rest);
                _ -> gen_tcp:close(Socket)
            end;
        {error, _} ->
            gen_tcp:close(Socket)
    end.

%% The replies in order: the answers before a file in one send, then the file (send_file/2).
send(_Socket, []) -> ok;
send(Socket, [{file, Path} | Rest]) ->
    then(send_file(Socket, Path), fun() -> send(Socket, Rest) end);
send(Socket, Replies) ->
    {Answers, Rest} = lists:splitwith(fun(Reply) -> not is_tuple(Reply) end, Replies),
    then(gen_tcp:send(Socket, Answers), fun() -> send(Socket, Rest) end).

then(ok, Next) -> Next();
then(Error, _Next) -> Error.

answer(Buffer, Route, Replies) ->
    case binary:split(Buffer, <<"\r\n\r\n">>) of
        [Head, Rest] ->
            case Route(target(Head)) of
                {ok, Value} -> answer(Rest, Route, [ok(Value) | Replies]);
                {file, _Path} = File -> answer(Rest, Route, [File | Replies]);
                not_found -> answer(Rest, Route, [?NOT_FOUND | Replies]);
                bad -> {close, lists:reverse(Replies, [?BAD_REQUEST])}
            end;
        [Partial] when byte_size(Partial) >= ?MAX_HEAD_BYTES ->
            {close, lists:reverse(Replies, [?BAD_REQUEST])};
        [Partial] ->
            {{more, Partial}, lists:reverse(Replies)}
    end.

%% The target of "GET <target> HTTP/1.1", or bad.
target(Head) ->
    [Line | _] = binary:split(Head, <<"\r\n">>),
    case binary:split(Line, <<" ">>, [global]) of
        [<<"GET">>, Target, _Version] -> Target;
        _ -> bad
    end.

ok(Value) ->
    Body = integer_to_binary(Value),
    [<<"HTTP/1.1 200 OK\r\nContent-Length: ">>, integer_to_binary(byte_size(Body)), <<"\r\n\r\n">>, Body].

%% work: busy-waits N microseconds of RUNNING time on erlang:monotonic_time/0 in the connection's
%% process. The loop never yields; the BEAM preempts it when its reductions run out, as it does any
%% CPU-bound process. Each step's delta counts only when it is below ?WORK_GAP_NS, so the time the
%% process spends preempted is not counted and every request costs N us of CPU.
work(<<"/work/", Digits/binary>>) ->
    case decimal(Digits, 1000000) of
        {ok, Micros} ->
            spin(erlang:convert_time_unit(Micros, microsecond, native), 0,
                 erlang:convert_time_unit(?WORK_GAP_NS, nanosecond, native), erlang:monotonic_time()),
            {ok, Micros};
        error ->
            bad
    end;
work(bad) -> bad;
work(_) -> not_found.

spin(Goal, Total, _Gap, _Last) when Total >= Goal -> ok;
spin(Goal, Total, Gap, Last) ->
    Now = erlang:monotonic_time(),
    case Now - Last of
        D when D < Gap -> spin(Goal, Total + D, Gap, Now);
        _ -> spin(Goal, Total, Gap, Now)       % a longer step: the process was not running
    end.

counter(<<"/counter/", Digits/binary>>) ->
    case decimal(Digits, ?COUNTER_KEYS - 1) of
        {ok, Key} -> {ok, ets:update_counter(?COUNTERS, Key, 1)};
        error -> bad
    end;
counter(bad) -> bad;
counter(_) -> not_found.

%% All digits, at least one, at most Max (leading zeros allowed).
decimal(<<>>, _Max) -> error;
decimal(Digits, Max) -> decimal(Digits, Max, 0).

decimal(<<>>, _Max, N) -> {ok, N};
decimal(<<D, Rest/binary>>, Max, N) when D >= $0, D =< $9, N * 10 + (D - $0) =< Max ->
    decimal(Rest, Max, N * 10 + (D - $0));
decimal(_, _, _) -> error.

%% $SB_FILES, the folder of the file scenario, which cannot be answered without it.
files_folder() ->
    case os:getenv("SB_FILES", "") of
        "" ->
            io:format(standard_error, "the file scenario needs SB_FILES (the folder of its files)~n", []),
            halt(2);
        Folder ->
            Folder
    end.

%% file: /file/4k is the file 4k of the folder; any other name is a 404 (no name from the request is
%% joined to the folder, so none reaches outside it).
file_route(Folder) ->
    Path = filename:join(Folder, "4k"),
    fun(<<"/file/4k">>) -> {file, Path};
       (bad) -> bad;
       (_) -> not_found
    end.

%% The file opened for this request (raw: by this process itself, not through a file server), its
%% head with the size fstat gives, then file:sendfile/5: the socket's driver sends it with
%% sendfile(2) (this process owns the socket, as sendfile/5 requires).
send_file(Socket, Path) ->
    {ok, Fd} = file:open(Path, [read, raw, binary]),
    try
        {ok, #file_info{size = Size}} = file:read_file_info(Fd),
        Head = [<<"HTTP/1.1 200 OK\r\nContent-Length: ">>, integer_to_binary(Size), <<"\r\n\r\n">>],
        then(gen_tcp:send(Socket, Head), fun() ->
            case file:sendfile(Fd, Socket, 0, Size, []) of
                {ok, _Sent} -> ok;
                Error -> Error
            end
        end)
    after
        file:close(Fd)
    end.
