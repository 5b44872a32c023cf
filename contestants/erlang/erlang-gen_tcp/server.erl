%% gen_tcp with a process per connection: a pool of acceptors waits on one listen socket; each
%% acceptor that gets a connection starts its replacement and serves that connection itself.
%% The BEAM schedulers (erl +S Workers:Workers) run the processes and steal work from each other.
-module(server).
-export([main/1]).

-define(HELLO, <<"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!">>).
-define(READ_BYTES, 65536).

%% Called by `erl -run server main Scenario Host Port Workers`.
main([Scenario, Host, Port, _Workers]) ->
    {Reply, Timeout} = scenario(Scenario),
    {ok, Ip} = inet:parse_address(Host),
    Options = [binary, {active, false}, {ip, Ip}, {reuseaddr, true}, {backlog, 1024},
               {nodelay, true}, {buffer, ?READ_BYTES},
               {send_timeout, Timeout}, {send_timeout_close, true}],
    %% The listen socket lives as long as the process that opened it, so not in this boot-time call.
    spawn(fun() ->
        case gen_tcp:listen(list_to_integer(Port), Options) of
            {ok, Listen} ->
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
scenario(Other) ->
    io:format(standard_error, "unsupported scenario: ~s~n", [Other]),
    halt(2).

timeout_ms() -> list_to_integer(os:getenv("SB_TIMEOUT_MS", "5000")).

acceptor(Listen, Reply, Timeout) ->
    case gen_tcp:accept(Listen) of
        {ok, Socket} ->
            spawn(fun() -> acceptor(Listen, Reply, Timeout) end),
            serve(Socket, Reply, Timeout);
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
