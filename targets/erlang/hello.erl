%% hello: the Erlang target of topobench, in the model of the 2007 and 2009
%% servers: gen_tcp and one process per connection. It answers every GET and
%% HEAD with the bytes cmd/hello sends (the same 141-byte header block and
%% "Hello World\n"), other methods with 405, keeps connections alive as
%% HTTP/1.1 does and tolerates pipelining. "?wait=DURATION" (Go syntax:
%% 100ms, 1.5s, 1m; at most 60s) delays the answer; a bad value gets a 400.
%% cmd/hello's "?work=" (calibrated CPU time) is not done here: a request
%% that asks for it gets a 400, so no measurement takes it for done.
%%
%% Usage: erl -noshell +S N -pa DIR -run hello main 127.0.0.1:PORT
%%
%% Writes "erlang: ready ..." to standard error once it listens. SIGTERM
%% halts the VM at once with exit status 0: the default, init:stop/0, takes
%% one to three seconds to stop applications this server does not use.
-module(hello).
-export([main/1]).
-behaviour(gen_event).
-export([init/1, handle_event/2, handle_call/2]).

-define(HEADER_TIMEOUT, 10000).   % as cmd/hello's -read-header-timeout
-define(IDLE_TIMEOUT, 300000).    % as cmd/hello's -idle-timeout
-define(MAX_HEADER, 1048576).     % net/http's DefaultMaxHeaderBytes
-define(MAX_BODY, 1048576).       % a larger request body closes the connection
-define(MAX_WAIT_MS, 60000).

main([Addr]) ->
    case parse_addr(Addr) of
        {ok, IP, Port} -> listen(IP, Port);
        error -> fail("bad address ~p, want IP:PORT", [Addr])
    end;
main(Args) ->
    fail("usage: hello IP:PORT (got ~p)", [Args]).

fail(Fmt, Args) ->
    io:format(standard_error, "erlang: " ++ Fmt ++ "~n", Args),
    halt(1).

parse_addr(Addr) ->
    case string:split(Addr, ":", trailing) of
        [Host, PortS] ->
            case {inet:parse_address(Host), catch list_to_integer(PortS)} of
                {{ok, IP}, Port} when is_integer(Port), Port >= 0, Port < 65536 -> {ok, IP, Port};
                _ -> error
            end;
        _ -> error
    end.

listen(IP, Port) ->
    Opts = [binary, {ip, IP}, {active, false}, {reuseaddr, true},
            {backlog, 65535}, {nodelay, true},
            % a peer that never reads cannot hold a process forever
            {send_timeout, 30000}, {send_timeout_close, true}],
    Self = self(),
    % The listening socket belongs to a process that outlives main/1.
    spawn(fun() ->
        case gen_tcp:listen(Port, Opts) of
            {ok, L} ->
                {ok, {_, P}} = inet:sockname(L),
                io:format(standard_error, "erlang: ready on ~s:~b, ~b schedulers, OTP ~s, pid ~s~n",
                          [inet:ntoa(IP), P, erlang:system_info(schedulers_online),
                           erlang:system_info(otp_release), os:getpid()]),
                ok = gen_event:swap_handler(erl_signal_server,
                                            {erl_signal_handler, []}, {?MODULE, []}),
                Self ! listening,
                accept(L);
            {error, Reason} ->
                fail("listening on ~s:~b: ~s", [inet:ntoa(IP), Port, inet:format_error(Reason)])
        end
    end),
    receive listening -> ok end.

%% The erl_signal_server handler: SIGTERM halts, other signals keep their
%% default of being ignored.
init(_) -> {ok, []}.
handle_event(sigterm, State) ->
    erlang:halt(0, [{flush, true}]),
    {ok, State};
handle_event(_, State) -> {ok, State}.
handle_call(_, State) -> {ok, ok, State}.

accept(L) ->
    case gen_tcp:accept(L) of
        {ok, S} ->
            Pid = spawn(fun() -> receive go -> request(S, <<>>) end end),
            ok = gen_tcp:controlling_process(S, Pid),
            Pid ! go,
            accept(L);
        {error, closed} ->
            ok;
        {error, _} ->
            % e.g. emfile: keep accepting once descriptors free up
            timer:sleep(10),
            accept(L)
    end.

%% request reads one request line; Buf holds bytes already received.
request(S, Buf) ->
    case erlang:decode_packet(http_bin, Buf, []) of
        {ok, {http_request, Method, Uri, Version}, Rest} ->
            Deadline = now_ms() + ?HEADER_TIMEOUT,
            headers(S, Rest, Deadline, #{method => Method, uri => Uri, version => Version});
        {ok, {http_error, _}, _} ->
            bad_request(S);
        {ok, _, Rest} ->
            request(S, Rest);   % stray blank line between requests
        {more, _} when byte_size(Buf) > ?MAX_HEADER ->
            gen_tcp:close(S);
        {more, _} ->
            Timeout = case Buf of <<>> -> ?IDLE_TIMEOUT; _ -> ?HEADER_TIMEOUT end,
            case gen_tcp:recv(S, 0, Timeout) of
                {ok, Data} -> request(S, <<Buf/binary, Data/binary>>);
                {error, _} -> gen_tcp:close(S)
            end;
        {error, _} ->
            bad_request(S)
    end.

headers(S, Buf, Deadline, Req) ->
    case erlang:decode_packet(httph_bin, Buf, []) of
        {ok, {http_header, _, Name, _, Value}, Rest} ->
            headers(S, Rest, Deadline, header(Name, Value, Req));
        {ok, http_eoh, Rest} ->
            body(S, Rest, Req);
        {ok, {http_error, _}, _} ->
            bad_request(S);
        {more, _} when byte_size(Buf) > ?MAX_HEADER ->
            gen_tcp:close(S);
        {more, _} ->
            case gen_tcp:recv(S, 0, max(0, Deadline - now_ms())) of
                {ok, Data} -> headers(S, <<Buf/binary, Data/binary>>, Deadline, Req);
                {error, _} -> gen_tcp:close(S)
            end;
        {error, _} ->
            bad_request(S)
    end.

header('Connection', V, Req) -> Req#{connection => string:lowercase(V)};
header('Content-Length', V, Req) ->
    case catch binary_to_integer(string:trim(V)) of
        N when is_integer(N), N >= 0 -> Req#{length => N};
        _ -> Req#{length => bad}
    end;
header('Transfer-Encoding', _, Req) -> Req#{chunked => true};
header(_, _, Req) -> Req.

%% body discards a request body of known length, then answers.
body(S, Buf, Req = #{chunked := true}) ->
    answer(S, Buf, Req#{close => true});
body(S, _, #{length := bad}) ->
    bad_request(S);
body(S, Buf, Req = #{length := N}) when N > ?MAX_BODY ->
    answer(S, Buf, Req#{close => true});
body(S, Buf, Req = #{length := N}) when byte_size(Buf) < N ->
    case gen_tcp:recv(S, 0, ?HEADER_TIMEOUT) of
        {ok, Data} -> body(S, <<Buf/binary, Data/binary>>, Req);
        {error, _} -> gen_tcp:close(S)
    end;
body(S, Buf, Req = #{length := N}) ->
    <<_:N/binary, Rest/binary>> = Buf,
    answer(S, Rest, maps:remove(length, Req));
body(S, Buf, Req) ->
    answer(S, Buf, Req).

answer(S, Rest, Req = #{method := Method, uri := Uri, version := Version}) ->
    KeepAlive = keep_alive(Version, maps:get(connection, Req, <<>>))
        andalso not maps:get(close, Req, false),
    {Status, Body} = case Method of
        M when M =:= 'GET'; M =:= 'HEAD' ->
            case wait(query(Uri)) of
                {ok, Ms} -> timer:sleep(Ms), {200, <<"Hello World\n">>};
                error -> {400, <<"Bad Request\n">>}
            end;
        _ -> {405, <<"Method Not Allowed\n">>}
    end,
    Resp = [response_head(Status, Version, KeepAlive, byte_size(Body)),
            case Method of 'HEAD' -> <<>>; _ -> Body end],
    case gen_tcp:send(S, Resp) of
        ok when KeepAlive -> request(S, Rest);
        _ -> gen_tcp:close(S)
    end.

%% keep_alive follows net/http: HTTP/1.1 unless "Connection: close",
%% HTTP/1.0 only with "Connection: keep-alive".
keep_alive({1, 1}, Conn) -> not has_token(Conn, <<"close">>);
keep_alive({1, 0}, Conn) -> has_token(Conn, <<"keep-alive">>);
keep_alive(_, _) -> false.

has_token(V, Token) ->
    lists:member(Token, [string:trim(T) || T <- binary:split(V, <<",">>, [global])]).

%% response_head builds the header block in net/http's order; its
%% Connection header goes first when kept alive and last when closing.
response_head(Status, {Major, Minor}, KeepAlive, Len) ->
    StatusLine = case Status of
        200 -> <<"200 OK">>;
        400 -> <<"400 Bad Request">>;
        405 -> <<"405 Method Not Allowed">>
    end,
    Proto = case {Major, Minor} of {1, 0} -> <<"HTTP/1.0 ">>; _ -> <<"HTTP/1.1 ">> end,
    [Proto, StatusLine, <<"\r\n">>,
     case Status of 405 -> <<"Allow: GET, HEAD\r\n">>; _ -> <<>> end,
     case KeepAlive of true -> <<"Connection: keep-alive\r\n">>; false -> <<>> end,
     <<"Content-Length: ">>, integer_to_binary(Len), <<"\r\n">>,
     <<"Content-Type: text/plain\r\n">>,
     <<"Date: ">>, http_date(), <<"\r\n">>,
     <<"Server: gophr\r\n">>,
     case {KeepAlive, Minor} of {false, 1} -> <<"Connection: close\r\n">>; _ -> <<>> end,
     <<"\r\n">>].

%% bad_request answers as net/http does and closes after the peer has had
%% the answer: closing with unread input would reset the connection.
bad_request(S) ->
    gen_tcp:send(S, <<"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      "Connection: close\r\n\r\n400 Bad Request">>),
    gen_tcp:shutdown(S, write),
    drain(S, now_ms() + 1000).

drain(S, Until) ->
    case gen_tcp:recv(S, 0, max(0, Until - now_ms())) of
        {ok, _} -> drain(S, Until);
        {error, _} -> gen_tcp:close(S)
    end.

query({abs_path, Path}) -> query(Path);
query({absoluteURI, _, _, _, Path}) -> query(Path);
query(Path) when is_binary(Path) ->
    case binary:split(Path, <<"?">>) of
        [_, Q] -> Q;
        _ -> <<>>
    end;
query(_) -> <<>>.

%% wait finds the first "wait" parameter of the query string and returns its
%% value in milliseconds (0 without one), or error; a "work" parameter is
%% an error too (see the top of this file).
wait(<<>>) -> {ok, 0};
wait(Query) ->
    Params = [binary:split(P, <<"=">>) || P <- binary:split(Query, <<"&">>, [global])],
    Values = [V || [<<"wait">>, V] <- Params],
    Work = [P || P = [<<"work">> | _] <- Params],
    case Values of
        _ when Work =/= [] -> error;
        [] -> {ok, 0};
        [V | _] ->
            case duration(V) of
                {ok, Ns} when Ns =< ?MAX_WAIT_MS * 1000000 -> {ok, Ns div 1000000};
                _ -> error
            end
    end.

%% duration parses the subset of Go's time.ParseDuration without a sign:
%% "0", or one or more of digits[.digits] followed by ns, us, ms, s, m or h.
duration(<<"0">>) -> {ok, 0};
duration(V) ->
    case re:run(V, <<"^(?:[0-9]+(?:\\.[0-9]+)?(?:ns|us|ms|s|m|h))+$">>) of
        {match, _} ->
            {match, Parts} = re:run(V, <<"([0-9]+)(?:\\.([0-9]+))?(ns|us|ms|s|m|h)">>,
                                    [global, {capture, all_but_first, binary}]),
            {ok, lists:sum([part(P) || P <- Parts])};
        nomatch -> error
    end.

part([Int, Frac, Unit]) ->
    Scale = case Unit of
        <<"ns">> -> 1; <<"us">> -> 1000; <<"ms">> -> 1000000;
        <<"s">> -> 1000000000; <<"m">> -> 60000000000; <<"h">> -> 3600000000000
    end,
    F = case Frac of <<>> -> 0; _ -> binary_to_integer(Frac) * Scale div pow10(byte_size(Frac)) end,
    binary_to_integer(Int) * Scale + F.

pow10(0) -> 1;
pow10(N) -> 10 * pow10(N - 1).

%% http_date is the Date value, formatted once a second per connection.
http_date() ->
    Now = erlang:system_time(second),
    case get(date) of
        {Now, D} -> D;
        _ ->
            {{Y, Mo, D0}, {H, Mi, S}} = calendar:system_time_to_universal_time(Now, second),
            Day = element(calendar:day_of_the_week(Y, Mo, D0),
                          {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}),
            Mon = element(Mo, {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}),
            D = iolist_to_binary(io_lib:format("~s, ~2..0b ~s ~4..0b ~2..0b:~2..0b:~2..0b GMT",
                                               [Day, D0, Mon, Y, H, Mi, S])),
            put(date, {Now, D}),
            D
    end.

now_ms() -> erlang:monotonic_time(millisecond).
