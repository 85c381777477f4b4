use super::*;

fn request(bytes: &str) -> (RpcId, String, Params<'_>) {
    match read(bytes.as_bytes()) {
        Ok(Message::Request { id, method, params }) => (id, method.into_owned(), params),
        other => panic!("not a request: {other:?}"),
    }
}

fn result(bytes: &str) -> (RpcId, Body<'_>) {
    match read(bytes.as_bytes()) {
        Ok(Message::Response {
            id,
            answer: Answer::Result(body),
        }) => (id, body),
        other => panic!("not a result: {other:?}"),
    }
}

#[test]
fn a_list_request_gives_its_cursor_digest_and_meta() {
    let (id, method, params) = request(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"c\"1",
            "_meta":{"io.modelcontextprotocol/clientInfo":{"name":"x"}}}}"#,
    );
    assert_eq!(id, RpcId::Int(7));
    assert_eq!(method, "tools/list");
    assert_eq!(params.cursor, CursorField::Text(CursorDigest::of("c\"1")));
    assert!(params.meta.is_some());
    let (_, _, params) = request(r#"{"id":"a","method":"tools/list","params":{"cursor":null}}"#);
    assert_eq!(params.cursor, CursorField::Null);
    let (_, _, params) = request(r#"{"id":"a","method":"tools/list","params":{"cursor":5}}"#);
    assert_eq!(params.cursor, CursorField::Other);
    let (_, _, params) = request(r#"{"id":"a","method":"tools/list","params":[1,2]}"#);
    assert_eq!(params.cursor, CursorField::Absent);
}

#[test]
fn ids_of_every_shape_pair_with_themselves_only() {
    let (a, _, _) = request(r#"{"id":1,"method":"m"}"#);
    let (b, _, _) = request(r#"{"id":"1","method":"m"}"#);
    let (c, _, _) = request(r#"{"id":18446744073709551615,"method":"m"}"#);
    let (d, _, _) = request(r#"{"id":1.5,"method":"m"}"#);
    assert_ne!(a, b);
    assert!(matches!(c, RpcId::Number(_)));
    assert!(matches!(d, RpcId::Number(_)));
    let (e, _) = result(r#"{"id":"1","result":{}}"#);
    assert_eq!(e, b);
    assert!(matches!(
        read(br#"{"id":null,"method":"m"}"#),
        Ok(Message::Notification)
    ));
    assert!(matches!(
        read(br#"{"id":null,"error":{"code":-32700}}"#),
        Ok(Message::Orphan)
    ));
}

#[test]
fn a_page_gives_identity_keys_and_next_cursor_only() {
    let (_, body) = result(
        r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[
            {"name":"a","description":"d","inputSchema":{"type":"object","properties":{"name":{}}}},
            {"name":7},"junk",{"title":"no name"}],"nextCursor":"n2"}}"#,
    );
    let Some(Items::Array { keys, count }) = &body.arrays[Kind::Tools as usize] else {
        panic!("no tools array");
    };
    // A number for a name, a string, an object without a name: counted,
    // not kept.
    assert_eq!(keys, &["a"]);
    assert_eq!(*count, 4);
    assert_eq!(body.next_cursor, CursorField::Text(CursorDigest::of("n2")));
    assert!(body.result_type_ok && body.object);
    assert!(body.arrays[Kind::Prompts as usize].is_none());
}

#[test]
fn what_the_walker_refuses_is_read_as_such() {
    let (_, body) = result(r#"{"id":1,"result":{"tools":{},"nextCursor":3,"resultType":"x"}}"#);
    assert!(matches!(
        body.arrays[Kind::Tools as usize],
        Some(Items::NotArray)
    ));
    assert_eq!(body.next_cursor, CursorField::Other);
    assert!(!body.result_type_ok);
    let (_, body) = result(r#"{"id":1,"result":[]}"#);
    assert!(!body.object);
    let (_, body) = result(
        r#"{"id":1,"result":{"resourceTemplates":[{"uriTemplate":"f://{x}"}],"nextCursor":""}}"#,
    );
    assert!(body.arrays[Kind::ResourceTemplates as usize].is_some());
    assert_eq!(body.next_cursor, CursorField::Text(CursorDigest::of("")));
}

#[test]
fn errors_keep_their_code() {
    match read(br#"{"id":3,"error":{"code":-32602,"message":"bad cursor"}}"#) {
        Ok(Message::Response {
            answer: Answer::Error { code },
            ..
        }) => assert_eq!(code, Some(-32602)),
        other => panic!("{other:?}"),
    }
    match read(br#"{"id":3,"error":{"code":"x"}}"#) {
        Ok(Message::Response {
            answer: Answer::Error { code },
            ..
        }) => assert_eq!(code, None),
        other => panic!("{other:?}"),
    }
}

#[test]
fn batches_garbage_and_truncation_are_told_apart() {
    assert_eq!(
        read(br#" [{"id":1,"method":"tools/list"}]"#).err(),
        Some(Unreadable::Batch)
    );
    for bad in [
        &b"not json"[..],
        br#"{"id":1,"method":"tools/list""#,
        br#"{"id":1}"#,
        br#"{"id":1,"method":5}"#,
        br#""just a string""#,
        b"7",
        b"null",
        br#"{"id":1,"result":{}} trailing"#,
        b"",
    ] {
        assert_eq!(read(bad).err(), Some(Unreadable::Unparsable), "{bad:?}");
    }
}

#[test]
fn initialize_gives_client_info_and_versions() {
    let (_, method, params) = request(
        r#"{"id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",
            "clientInfo":{"name":"mcp","version":"0.1.0"},"capabilities":{}}}"#,
    );
    assert_eq!(method, "initialize");
    assert_eq!(params.protocol_version.as_deref(), Some("2025-06-18"));
    assert_eq!(params.client_info.unwrap()["name"], "mcp");
    let (_, body) = result(r#"{"id":0,"result":{"protocolVersion":"2025-11-25"}}"#);
    assert_eq!(body.protocol_version.as_deref(), Some("2025-11-25"));
}

#[test]
fn a_huge_cursor_is_kept_as_its_digest() {
    let cursor = "c".repeat(1 << 20);
    let message = format!(r#"{{"id":1,"method":"tools/list","params":{{"cursor":"{cursor}"}}}}"#);
    let (_, _, params) = request(&message);
    assert_eq!(params.cursor, CursorField::Text(CursorDigest::of(&cursor)));
    assert_eq!(std::mem::size_of_val(&params.cursor), 17);
}
