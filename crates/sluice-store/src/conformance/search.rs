//! Conformance: search, every query form, field choice, filters, order and pages, scoped to
//! the workspace.

use super::*;

/// Terms, phrases, OR chains, exclusions, only exclusions, short needles, Unicode case and
/// literal SQL wildcards: each finds exactly the logs the matcher accepts.
pub async fn search_finds_every_query_form_case_insensitively(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let texts = [
        "Timeout talking to DB-1",
        "connection reset by peer",
        "disk 100% full",
        "user_id missing",
        r"path C:\temp\x",
        "ÉTÉ CHAUD à Straße",
        "ΟΔΟΣ closed",
        "all good",
    ];
    let logs: Vec<Log> = texts.iter().enumerate().map(|(i, text)| log(text, T0 + i as i64)).collect();
    store.insert_logs(workspace, &logs).await.expect("insert");
    let message = &[SearchField::Message];
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("timeout", vec!["Timeout talking to DB-1"]),
        ("TIMEOUT db-1", vec!["Timeout talking to DB-1"]),
        ("timeout reset", vec![]),
        (r#""reset by peer""#, vec!["connection reset by peer"]),
        (r#""by reset""#, vec![]),
        (r#""reset by"#, vec!["connection reset by peer"]),
        ("timeout OR reset OR good", vec!["all good", "connection reset by peer", "Timeout talking to DB-1"]),
        ("timeout OR reset -peer", vec!["Timeout talking to DB-1"]),
        ("-o", vec!["disk 100% full", "user_id missing", r"path C:\temp\x", "ÉTÉ CHAUD à Straße"]),
        ("-timeout -reset -good -disk -user -path -été", vec!["ΟΔΟΣ closed"]),
        ("% disk", vec!["disk 100% full"]),
        ("%%", vec![]),
        ("0%", vec!["disk 100% full"]),
        ("r_i", vec!["user_id missing"]),
        ("_ missing", vec!["user_id missing"]),
        ("r_", vec!["user_id missing"]),
        ("__", vec![]),
        (r"c:\temp", vec![r"path C:\temp\x"]),
        (r"\ path", vec![r"path C:\temp\x"]),
        (r"\t", vec![r"path C:\temp\x"]),
        ("été chaud", vec!["ÉTÉ CHAUD à Straße"]),
        ("STRASSE", vec![]),
        ("straße", vec!["ÉTÉ CHAUD à Straße"]),
        ("οδοσ", vec!["ΟΔΟΣ closed"]),
        ("ab", vec![]),
        ("db", vec!["Timeout talking to DB-1"]),
    ];
    for (raw, expected) in cases {
        let mut expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
        // Newest first: the texts were inserted oldest first.
        expected.sort_by_key(|text| std::cmp::Reverse(texts.iter().position(|t| t == text)));
        assert_eq!(found(store, workspace, raw, message).await, expected, "query {raw:?}");
    }
}

/// `fields` picks the columns searched; `data` is searched as its JSON text.
pub async fn search_fields_choose_where_to_look(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let mut failing = log("request failed", T0);
    failing.entry.error_name = Some("TimeoutError".into());
    failing.entry.error_stack = Some("at Pool.acquire (pool.js:10)".into());
    failing.entry.data = json!({"host": "db-7", "retries": 3}).as_object().map(JsonObject::from_map);
    let plain = log("timeout on db-7 pool", T0 + 1);
    store.insert_logs(workspace, &[failing, plain]).await.expect("insert");

    let all = SearchField::ALL;
    assert_eq!(found(store, workspace, "timeout", &[SearchField::Message]).await, ["timeout on db-7 pool"]);
    assert_eq!(found(store, workspace, "timeouterror", &[SearchField::ErrorName]).await, ["request failed"]);
    assert_eq!(found(store, workspace, "pool.acquire", &[SearchField::ErrorStack]).await, ["request failed"]);
    assert_eq!(found(store, workspace, "pool.acquire", &[SearchField::Message]).await, Vec::<String>::new());
    assert_eq!(found(store, workspace, r#""host":"db-7""#, &[SearchField::Data]).await, ["request failed"]);
    assert_eq!(found(store, workspace, r#""retries":3"#, &[SearchField::Data]).await, ["request failed"]);
    assert_eq!(found(store, workspace, "db-7", &all).await, ["timeout on db-7 pool", "request failed"]);
    // Each term may be in a different searched field.
    assert_eq!(found(store, workspace, "failed timeouterror", &all).await, ["request failed"]);
    assert_eq!(found(store, workspace, "failed timeouterror", &[SearchField::Message]).await, Vec::<String>::new());
    // An exclusion looks in every searched field too.
    assert_eq!(found(store, workspace, "db-7 -retries", &all).await, ["timeout on db-7 pool"]);
}

/// Search takes list's filters, orders newest first with the id tiebreak, and pages with an
/// exact `has_more`.
pub async fn search_filters_orders_and_pages(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let mut logs: Vec<Log> = (0..7).map(|i| log(&format!("payment {i} failed"), T0 + i)).collect();
    logs[1].entry.level = Level::Error;
    logs[2].entry.source = "billing".into();
    logs[3].entry.environment = Environment::Staging;
    logs[4].entry.dataset = "audit".into();
    let tie_a = log("payment tie failed", T0 + 100);
    let tie_b = log("payment tie failed", T0 + 100);
    let (low, high) = if tie_a.id < tie_b.id { (tie_a, tie_b) } else { (tie_b, tie_a) };
    logs.push(low.clone());
    logs.push(high.clone());
    logs.push(log("something else", T0 + 200));
    store.insert_logs(workspace, &logs).await.expect("insert");

    let query = search("payment failed", &[SearchField::Message]);
    let run = |filter: LogFilter, page: Page| {
        let query = query.clone();
        async move { store.search_logs(workspace, &query, &filter, page).await.expect("search") }
    };
    let all = run(LogFilter::default(), EVERYTHING).await;
    let ids: Vec<LogId> = all.logs.iter().map(|log| log.id).collect();
    assert_eq!(ids[..2], [high.id, low.id], "newest first, equal timestamps by id desc");
    assert_eq!(
        messages(&all.logs)[2..],
        [
            "payment 6 failed",
            "payment 5 failed",
            "payment 4 failed",
            "payment 3 failed",
            "payment 2 failed",
            "payment 1 failed",
            "payment 0 failed"
        ]
    );

    let filters: Vec<(LogFilter, Vec<&str>)> = vec![
        (LogFilter { level: Some(Level::Error), ..LogFilter::default() }, vec!["payment 1 failed"]),
        (LogFilter { source: Some("billing".into()), ..LogFilter::default() }, vec!["payment 2 failed"]),
        (LogFilter { environment: Some(Environment::Staging), ..LogFilter::default() }, vec!["payment 3 failed"]),
        (LogFilter { dataset: Some("audit".into()), ..LogFilter::default() }, vec!["payment 4 failed"]),
        (
            LogFilter { from: Some(T0 + 5), to: Some(T0 + 6), ..LogFilter::default() },
            vec!["payment 6 failed", "payment 5 failed"],
        ),
    ];
    for (filter, expected) in filters {
        assert_eq!(messages(&run(filter.clone(), EVERYTHING).await.logs), expected, "{filter:?}");
    }

    let first = run(LogFilter::default(), Page { limit: 4, offset: 0 }).await;
    assert_eq!((first.logs.len(), first.has_more), (4, true));
    let last = run(LogFilter::default(), Page { limit: 4, offset: 6 }).await;
    assert_eq!(
        (messages(&last.logs), last.has_more),
        (vec!["payment 2 failed", "payment 1 failed", "payment 0 failed"], false)
    );
    let exact = run(LogFilter::default(), Page { limit: 9, offset: 0 }).await;
    assert_eq!((exact.logs.len(), exact.has_more), (9, false));
    // A short needle is not indexable: the same answers by walking the logs.
    let short = search("nt -tie", &[SearchField::Message]);
    let page = store
        .search_logs(workspace, &short, &LogFilter::default(), Page { limit: 2, offset: 1 })
        .await
        .expect("search");
    assert_eq!((messages(&page.logs), page.has_more), (vec!["payment 5 failed", "payment 4 failed"], true));
}

/// Another workspace's logs are never found.
pub async fn search_is_scoped_to_the_workspace(store: &dyn Store) {
    let mine = new_workspace(store, "mine").await;
    let theirs = new_workspace(store, "theirs").await;
    store.insert_logs(theirs, &[log("secret token leaked", T0)]).await.expect("insert");
    store.insert_logs(mine, &[log("public notice", T0)]).await.expect("insert");
    assert_eq!(found(store, mine, "secret", &[SearchField::Message]).await, Vec::<String>::new());
    assert_eq!(found(store, mine, "-public", &[SearchField::Message]).await, Vec::<String>::new());
    assert_eq!(found(store, mine, "se", &[SearchField::Message]).await, Vec::<String>::new());
    assert_eq!(found(store, theirs, "secret", &[SearchField::Message]).await, ["secret token leaked"]);
}

/// Needles of eight characters or more (looked up by long grams) are found wherever they
/// stand: a whole token, its start, its end, its middle, across separators, in any case; and
/// a rare needle's page is the newest of its matches however the timestamps lie across the
/// batches that wrote them, with `has_more` exact.
pub async fn search_finds_long_needles_anywhere_and_pages_them_newest_first(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let texts = [
        "order ORD-4821937 shipped",
        "trace 3f2a9c1e-1b2c-4d5e-8f90-0123456789ab done",
        "req=8f3a2b1c9d0e4f57 took 12ms",
        "blk_-1608999687919862906 received",
        "Ünïcödé-Identifier-ÀÉÎ end",
    ];
    let logs: Vec<Log> = texts.iter().enumerate().map(|(i, text)| log(text, T0 + i as i64)).collect();
    store.insert_logs(workspace, &logs).await.expect("insert");
    let message = &[SearchField::Message];
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("ord-4821937", vec![texts[0]]),
        ("RD-4821937 SHIP", vec![texts[0]]),
        ("d-482193", vec![texts[0]]),
        ("ord-4821938", vec![]),
        ("3f2a9c1e-1b2c-4d5e-8f90-0123456789ab", vec![texts[1]]),
        ("1b2c-4d5e-8f", vec![texts[1]]),
        ("8F3A2B1C9D0E4F57", vec![texts[2]]),
        ("a2b1c9d0e4", vec![texts[2]]),
        ("a2b1c9d0e5", vec![]),
        ("99968791986290", vec![texts[3]]),
        ("ünïcödé-identifier", vec![texts[4]]),
        ("identifier-àéî", vec![texts[4]]),
    ];
    for (raw, expected) in cases {
        assert_eq!(found(store, workspace, raw, message).await, expected, "query {raw:?}");
    }

    // One needle in every third log of 60, written in batches of 7 whose timestamps run
    // backwards batch by batch and forwards within one: newest first is not insertion order.
    let other = new_workspace(store, "paged").await;
    let mut expected = Vec::new();
    for batch in 0..9_i64 {
        let logs: Vec<Log> = (0..7_i64)
            .filter_map(|i| {
                let n = batch * 7 + i;
                (n < 60).then(|| {
                    let text = if n % 3 == 0 { format!("call {n} for ORDER-20261125-77") } else { format!("call {n}") };
                    log(&text, T0 + (9 - batch) * 1_000 + i)
                })
            })
            .collect();
        expected.extend(
            logs.iter()
                .filter(|log| log.entry.message.contains("ORDER"))
                .map(|log| (log.entry.timestamp, log.entry.message.clone())),
        );
        store.insert_logs(other, &logs).await.expect("insert");
    }
    expected.sort_by_key(|(ts, _)| std::cmp::Reverse(*ts));
    let expected: Vec<String> = expected.into_iter().map(|(_, message)| message).collect();
    let query = search("order-20261125-77", message);
    let all = store.search_logs(other, &query, &LogFilter::default(), EVERYTHING).await.expect("search");
    assert_eq!(messages(&all.logs), expected);
    assert!(!all.has_more);
    assert_pages(store, other, &query, &expected, &[(0, 5), (5, 5), (15, 5), (18, 2), (19, 5)]).await;
}

/// Each page `(offset, limit)` of `query` holds those of `expected` (every match, newest
/// first) and says whether more follow.
async fn assert_pages(
    store: &dyn Store,
    workspace: WorkspaceId,
    query: &Search,
    expected: &[String],
    pages: &[(u64, u32)],
) {
    for &(offset, limit) in pages {
        let page = Page { offset, limit };
        let got = store.search_logs(workspace, query, &LogFilter::default(), page).await.expect("search");
        let want: Vec<String> = expected.iter().skip(offset as usize).take(limit as usize).cloned().collect();
        assert_eq!(messages(&got.logs), want, "offset {offset} limit {limit}");
        assert_eq!(got.has_more, (offset + u64::from(limit)) < expected.len() as u64, "offset {offset} limit {limit}");
    }
}

/// A page far from the newest, when the blocks a search reads overlap in time: every batch
/// holds logs from all over the span, so a later step of a walk brings logs newer than some it
/// already skipped. The skipped ones are held by key only (a store holds the page, not the
/// rows before it), and those pushed onto the page are read again: every page equals the
/// matches sorted in memory.
pub async fn search_pages_far_from_the_newest_when_blocks_overlap_in_time(store: &dyn Store) {
    let workspace = new_workspace(store, "overlap").await;
    let mut expected = Vec::new();
    for batch in 0..30_i64 {
        // Distinct times (a permutation of 0..127), scattered over the span in every batch.
        let logs: Vec<Log> = (0..4_i64)
            .map(|i| {
                let n = batch * 4 + i;
                let text = if n % 5 == 4 { format!("entry {n}") } else { format!("entry {n} CASE-7781-{n}") };
                log(&text, T0 + (n * 7_919) % 127 * 10)
            })
            .collect();
        expected.extend(
            logs.iter()
                .filter(|log| log.entry.message.contains("CASE"))
                .map(|log| (log.entry.timestamp, log.entry.message.clone())),
        );
        store.insert_logs(workspace, &logs).await.expect("insert");
    }
    expected.sort_by_key(|(ts, _)| std::cmp::Reverse(*ts));
    let expected: Vec<String> = expected.into_iter().map(|(_, message)| message).collect();
    let query = search("case-7781", &[SearchField::Message]);
    assert_pages(store, workspace, &query, &expected, &[(0, 3), (10, 7), (40, 20), (60, 50), (90, 5), (95, 10)]).await;
}

/// A rare identifier among many logs of one write (more than a granule of a block, read only
/// where the granule's filter may hold the needle):
/// exactly its logs are found, alone, in an OR chain, in a phrase, with an exclusion and with
/// a level filter; a needle without keys (a word) still finds every log that holds it.
pub async fn search_finds_each_log_of_a_large_write_by_its_identifier(store: &dyn Store) {
    let workspace = new_workspace(store, "slots").await;
    let text = |n: i64| format!("step {n} order=ORD-{:07} req={:016x} done", n * 7_919 % 10_000_000, n * 104_729 + 3);
    let mut logs: Vec<Log> = (0..600_i64).map(|n| log(&text(n), T0 + n)).collect();
    for (n, log) in logs.iter_mut().enumerate() {
        if n % 50 == 7 {
            log.entry.level = Level::Error;
            log.entry.message.push_str(" mango");
        }
    }
    store.insert_logs(workspace, &logs).await.expect("insert");
    let message = &[SearchField::Message];
    for n in [0_i64, 1, 8, 255, 256, 258, 299, 511, 512, 599] {
        let order = format!("ORD-{:07}", n * 7_919 % 10_000_000);
        assert_eq!(found(store, workspace, &order, message).await, [text(n)], "{order}");
        let req = format!("{:016x}", n * 104_729 + 3);
        assert_eq!(found(store, workspace, &req, message).await, [text(n)], "{req}");
    }
    let either = format!("ORD-{:07} OR req={:016x}", 3 * 7_919, 598 * 104_729 + 3);
    assert_eq!(found(store, workspace, &either, message).await, [text(598), text(3)]);
    let phrase = format!("\"{:016x} done\"", 300 * 104_729 + 3);
    assert_eq!(found(store, workspace, &phrase, message).await, [text(300)]);
    let excluded = format!("ORD-{:07} -done", 300 * 7_919);
    assert_eq!(found(store, workspace, &excluded, message).await, Vec::<String>::new());
    let errors = LogFilter { level: Some(Level::Error), ..LogFilter::default() };
    let query = search(&format!("ORD-{:07}", 257 * 7_919), message);
    let page = store.search_logs(workspace, &query, &errors, EVERYTHING).await.expect("search");
    assert_eq!(messages(&page.logs), [format!("{} mango", text(257))]);
    let query = search(&format!("ORD-{:07}", 258 * 7_919), message);
    let page = store.search_logs(workspace, &query, &errors, EVERYTHING).await.expect("search");
    assert_eq!(messages(&page.logs), Vec::<String>::new());
    assert_eq!(found(store, workspace, "mango", message).await.len(), 12);

    // Text with a NUL, non-ASCII text, and ASCII text in the other searchable fields: each
    // found by its identifier and by its words, in any case.
    let other = new_workspace(store, "folding").await;
    let mut logs = vec![
        log("nul\0HERE ORD-7777777", T0),
        log("Ünïcode ORD-8888888 İSTANBUL Straße", T0 + 1),
        log("plain", T0 + 2),
    ];
    logs[2].entry.error_name = Some("TimeoutError".to_owned());
    logs[2].entry.error_stack = Some("at Pool.ACQUIRE (pool.js:42)".to_owned());
    let all = &[SearchField::Message, SearchField::ErrorName, SearchField::ErrorStack, SearchField::Data];
    store.insert_logs(other, &logs).await.expect("insert");
    assert_eq!(found(store, other, "ord-7777777", all).await, ["nul\0HERE ORD-7777777"]);
    assert_eq!(found(store, other, "\"nul\0here\"", all).await, ["nul\0HERE ORD-7777777"]);
    assert_eq!(found(store, other, "ÜNÏCODE ord-8888888", all).await, ["Ünïcode ORD-8888888 İSTANBUL Straße"]);
    assert_eq!(found(store, other, "straße", all).await, ["Ünïcode ORD-8888888 İSTANBUL Straße"]);
    assert_eq!(found(store, other, "timeouterror", all).await, ["plain"]);
    assert_eq!(found(store, other, "pool.acquire", all).await, ["plain"]);
    assert_eq!(found(store, other, "pool.acquire", message).await, Vec::<String>::new());
}

/// Needles holding digits and punctuation (identifiers, dates) in every searchable field, in
/// any case, beside text without letters in them: each finds the logs holding the whole
/// needle, not those holding only its digits.
pub async fn search_finds_identifiers_in_every_field_whatever_their_case(store: &dyn Store) {
    let workspace = new_workspace(store, "identifiers").await;
    let mut logs = vec![
        log("Order ORD-0012345 shipped", T0),
        log("order ord-0012346 held", T0 + 1),
        log("request failed", T0 + 2),
        log("ok", T0 + 3),
        log("Café ORD-0012345 payé", T0 + 4),
        log("nul\0ORD-0012347\0end", T0 + 5),
        log("dated 2026-11-28 run", T0 + 6),
        log("ORD0012345 and XORD-0012345", T0 + 7),
    ];
    logs[1].entry.error_name = Some("E-777000X".to_owned());
    logs[2].entry.error_stack = Some("at Handler (REQ-9876543.rs:12)".to_owned());
    logs[3].entry.data = json!({"Trace": "F00823C5-D6A4-4DEF-900C-08BB5B98BF56"}).as_object().map(JsonObject::from_map);
    store.insert_logs(workspace, &logs).await.expect("insert");
    let all = &SearchField::ALL;
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("ord-0012345", vec!["ORD0012345 and XORD-0012345", "Café ORD-0012345 payé", "Order ORD-0012345 shipped"]),
        ("0012345", vec!["ORD0012345 and XORD-0012345", "Café ORD-0012345 payé", "Order ORD-0012345 shipped"]),
        ("\"order ord-0012345\"", vec!["Order ORD-0012345 shipped"]),
        ("\"café ord-0012345 payé\"", vec!["Café ORD-0012345 payé"]),
        ("ORD-0012346", vec!["order ord-0012346 held"]),
        ("e-777000x", vec!["order ord-0012346 held"]),
        ("e-777000y", vec![]),
        ("req-9876543.rs:12", vec!["request failed"]),
        ("(req-9876543.rs:13)", vec![]),
        ("f00823c5-d6a4-4def-900c-08bb5b98bf56", vec!["ok"]),
        ("d6a4-4def-900c", vec!["ok"]),
        ("ord-0012347", vec!["nul\0ORD-0012347\0end"]),
        ("2026-11-28", vec!["dated 2026-11-28 run"]),
        ("2026-11-29", vec![]),
        (
            "ord-001234",
            vec![
                "nul\0ORD-0012347\0end",
                "ORD0012345 and XORD-0012345",
                "Café ORD-0012345 payé",
                "order ord-0012346 held",
                "Order ORD-0012345 shipped",
            ],
        ),
        ("xord-0012345 OR e-777000x", vec!["ORD0012345 and XORD-0012345", "order ord-0012346 held"]),
        ("ord-0012345 -café", vec!["ORD0012345 and XORD-0012345", "Order ORD-0012345 shipped"]),
    ];
    for (raw, expected) in cases {
        let mut expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
        expected.sort_by_key(|text| std::cmp::Reverse(logs.iter().position(|log| &log.entry.message == text)));
        assert_eq!(found(store, workspace, raw, all).await, expected, "query {raw:?}");
    }
}
