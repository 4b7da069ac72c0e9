//! The one diesel schema shared by SQLite and PostgreSQL; mirrors
//! `migrations/{sqlite,postgres}`. Decimal columns are `Text`
//! (docs/architecture.md, "Data model").

diesel::table! {
    apps (id) {
        id -> BigInt,
        client_id -> Text,
        name -> Text,
        client_secret_hash -> Nullable<Text>,
        is_public -> Bool,
        billing_model -> Text,
        default_max_accounts -> Nullable<Integer>,
        created_at -> Timestamp,
        is_demo -> Bool,
        kind -> Text,
        registered_ip -> Nullable<Text>,
        last_used_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    app_redirect_uris (id) {
        id -> BigInt,
        app_id -> BigInt,
        uri -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    users (id) {
        id -> BigInt,
        app_id -> Nullable<BigInt>,
        email -> Text,
        external_user_id -> Nullable<Text>,
        max_accounts -> Nullable<Integer>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        public_id -> Nullable<Text>,
        subscription_processor -> Nullable<Text>,
        subscription_reference -> Nullable<Text>,
        subscribed_at -> Nullable<Timestamp>,
        change_seq -> BigInt,
        tombstones_purged_seq -> BigInt,
    }
}

diesel::table! {
    api_keys (id) {
        id -> BigInt,
        user_id -> BigInt,
        name -> Text,
        key_hash -> Text,
        is_restricted -> Bool,
        created_at -> Timestamp,
        last_used_at -> Nullable<Timestamp>,
        revoked_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    api_key_accounts (api_key_id, account_id) {
        api_key_id -> BigInt,
        account_id -> BigInt,
    }
}

diesel::table! {
    simplefin_destinations (id) {
        id -> BigInt,
        user_id -> BigInt,
        name -> Text,
        is_restricted -> Bool,
        claim_hash -> Text,
        claim_expires_at -> Timestamp,
        claimed_at -> Nullable<Timestamp>,
        access_username -> Nullable<Text>,
        access_hash -> Nullable<Text>,
        created_at -> Timestamp,
        last_used_at -> Nullable<Timestamp>,
        revoked_at -> Nullable<Timestamp>,
        quota_day -> Nullable<Date>,
        quota_used -> Integer,
    }
}

diesel::table! {
    simplefin_destination_accounts (destination_id, account_id) {
        destination_id -> BigInt,
        account_id -> BigInt,
    }
}

diesel::table! {
    institutions (id) {
        id -> BigInt,
        provider -> Text,
        provider_institution_id -> Text,
        name -> Text,
        logo_url -> Nullable<Text>,
    }
}

diesel::table! {
    connections (id) {
        id -> BigInt,
        user_id -> BigInt,
        institution_id -> BigInt,
        provider -> Text,
        status -> Text,
        status_reason -> Nullable<Text>,
        settings -> Text,
        credentials_encrypted -> Nullable<Binary>,
        last_synced_at -> Nullable<Timestamp>,
        next_sync_at -> Nullable<Timestamp>,
        consecutive_failures -> Integer,
        consent_expires_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        quota_day -> Nullable<Date>,
        quota_used -> Integer,
        status_detail -> Nullable<Text>,
        chosen_accounts -> Nullable<Text>,
        offered_accounts -> Nullable<Text>,
    }
}

diesel::table! {
    accounts (id) {
        id -> BigInt,
        connection_id -> BigInt,
        user_id -> BigInt,
        provider_account_id -> Text,
        name -> Text,
        kind -> Text,
        currency -> Text,
        mask -> Nullable<Text>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        posted_transactions -> BigInt,
        pending_transactions -> BigInt,
        transactions_version -> BigInt,
        institution_id -> Nullable<BigInt>,
        credit_limit -> Nullable<Text>,
        minimum_payment -> Nullable<Text>,
        next_payment_due -> Nullable<Date>,
        last_statement_balance -> Nullable<Text>,
    }
}

diesel::table! {
    transactions (id) {
        id -> BigInt,
        account_id -> BigInt,
        provider_transaction_id -> Text,
        pending_provider_id -> Nullable<Text>,
        is_pending -> Bool,
        booked_on -> Date,
        amount -> Text,
        currency -> Text,
        merchant -> Nullable<Text>,
        description -> Nullable<Text>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        change_seq -> BigInt,
        created_seq -> BigInt,
        clean_merchant -> Nullable<Text>,
        subcategory -> Nullable<Text>,
        category_source -> Nullable<Text>,
        category_hints -> Nullable<Text>,
        enriched_version -> Integer,
        transfer_transaction_id -> Nullable<BigInt>,
        transfer_account_id -> Nullable<BigInt>,
        transfer_subcategory -> Nullable<Text>,
    }
}

diesel::table! {
    balances (id) {
        id -> BigInt,
        account_id -> BigInt,
        amount -> Text,
        available -> Nullable<Text>,
        currency -> Text,
        as_of -> Timestamp,
        created_at -> Timestamp,
        change_seq -> BigInt,
    }
}

diesel::table! {
    securities (id) {
        id -> BigInt,
        identity_key -> Text,
        name -> Text,
        currency -> Text,
        ticker -> Nullable<Text>,
        figi -> Nullable<Text>,
        cusip -> Nullable<Text>,
        isin -> Nullable<Text>,
        user_id -> Nullable<BigInt>,
    }
}

diesel::table! {
    holdings (id) {
        id -> BigInt,
        account_id -> BigInt,
        security_id -> BigInt,
        quantity -> Text,
        price -> Text,
        value -> Text,
        value_in_account_currency -> Nullable<Text>,
        cost_basis -> Nullable<Text>,
        currency -> Text,
        raw -> Text,
        as_of -> Timestamp,
        change_seq -> BigInt,
    }
}

diesel::table! {
    investment_transactions (id) {
        id -> BigInt,
        account_id -> BigInt,
        provider_id -> Text,
        traded_on -> Date,
        kind -> Text,
        subtype -> Nullable<Text>,
        security_id -> Nullable<BigInt>,
        quantity -> Nullable<Text>,
        price -> Nullable<Text>,
        amount -> Text,
        fees -> Nullable<Text>,
        currency -> Text,
        description -> Nullable<Text>,
        raw -> Text,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        change_seq -> BigInt,
        created_seq -> BigInt,
    }
}

diesel::table! {
    investment_tombstones (id) {
        id -> BigInt,
        user_id -> BigInt,
        account_id -> BigInt,
        seq -> BigInt,
        removed_at -> Timestamp,
    }
}

diesel::table! {
    sync_jobs (id) {
        id -> BigInt,
        connection_id -> BigInt,
        kind -> Text,
        status -> Text,
        run_after -> Timestamp,
        attempts -> Integer,
        locked_by -> Nullable<Text>,
        lease_expires_at -> Nullable<Timestamp>,
        started_at -> Nullable<Timestamp>,
        finished_at -> Nullable<Timestamp>,
        error -> Nullable<Text>,
        summary -> Nullable<Text>,
        created_at -> Timestamp,
        turn -> Nullable<BigInt>,
    }
}

diesel::table! {
    provider_gates (provider) {
        provider -> Text,
        touched_at -> Timestamp,
        next_slot -> Nullable<Timestamp>,
    }
}

diesel::table! {
    provider_admissions (id) {
        id -> BigInt,
        provider -> Text,
        job_id -> BigInt,
        admitted_at -> Timestamp,
    }
}

diesel::table! {
    sync_turns (owner) {
        owner -> Text,
        last_turn -> BigInt,
    }
}

diesel::table! {
    oauth_tokens (id) {
        id -> BigInt,
        app_id -> BigInt,
        user_id -> BigInt,
        family -> Text,
        kind -> Text,
        token_hash -> Text,
        expires_at -> Timestamp,
        used_at -> Nullable<Timestamp>,
        revoked_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
        grant_id -> Nullable<BigInt>,
    }
}

diesel::table! {
    oauth_codes (id) {
        id -> BigInt,
        app_id -> BigInt,
        user_id -> BigInt,
        code_hash -> Text,
        redirect_uri -> Text,
        code_challenge -> Nullable<Text>,
        code_challenge_method -> Nullable<Text>,
        expires_at -> Timestamp,
        redeemed_at -> Nullable<Timestamp>,
        family -> Nullable<Text>,
        created_at -> Timestamp,
        grant_id -> Nullable<BigInt>,
    }
}

diesel::table! {
    mcp_grants (id) {
        id -> BigInt,
        user_id -> BigInt,
        app_id -> BigInt,
        created_at -> Timestamp,
        last_used_at -> Nullable<Timestamp>,
        revoked_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    mcp_grant_accounts (grant_id, account_id) {
        grant_id -> BigInt,
        account_id -> BigInt,
    }
}

diesel::table! {
    portal_sessions (id) {
        id -> BigInt,
        app_id -> BigInt,
        user_id -> BigInt,
        token_hash -> Text,
        expires_at -> Timestamp,
        used_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    web_sessions (id) {
        id -> BigInt,
        token_hash -> Text,
        purpose -> Text,
        app_id -> BigInt,
        user_id -> Nullable<BigInt>,
        redirect_uri -> Nullable<Text>,
        client_state -> Nullable<Text>,
        code_challenge -> Nullable<Text>,
        code_challenge_method -> Nullable<Text>,
        login_hint -> Nullable<Text>,
        pending_connection_id -> Nullable<BigInt>,
        ip -> Nullable<Text>,
        expires_at -> Timestamp,
        created_at -> Timestamp,
    }
}

diesel::table! {
    sign_in_codes (id) {
        id -> BigInt,
        web_session_id -> Nullable<BigInt>,
        email -> Text,
        ip -> Text,
        code_hash -> Text,
        attempts -> Integer,
        expires_at -> Timestamp,
        used_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
        browser_hash -> Nullable<Text>,
        surface -> Text,
    }
}

diesel::table! {
    checkouts (id) {
        id -> BigInt,
        user_id -> BigInt,
        processor -> Text,
        external_id -> Text,
        status -> Text,
        subscription_reference -> Nullable<Text>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    dashboard_login_links (id) {
        id -> BigInt,
        token_hash -> Text,
        user_id -> BigInt,
        expires_at -> Timestamp,
        used_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    dashboard_sessions (id) {
        id -> BigInt,
        token_hash -> Text,
        user_id -> BigInt,
        created_at -> Timestamp,
        last_seen_at -> Timestamp,
        expires_at -> Timestamp,
        pending_connection_id -> Nullable<BigInt>,
    }
}

diesel::table! {
    developers (id) {
        id -> BigInt,
        email -> Text,
        created_at -> Timestamp,
        last_signed_in_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    developer_apps (app_id) {
        app_id -> BigInt,
        developer_id -> BigInt,
    }
}

diesel::table! {
    developer_sessions (id) {
        id -> BigInt,
        token_hash -> Text,
        developer_id -> BigInt,
        created_at -> Timestamp,
        last_seen_at -> Timestamp,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    transaction_tombstones (id) {
        id -> BigInt,
        user_id -> BigInt,
        account_id -> BigInt,
        seq -> BigInt,
        removed_at -> Timestamp,
    }
}

diesel::table! {
    webhook_endpoints (id) {
        id -> BigInt,
        user_id -> Nullable<BigInt>,
        app_id -> Nullable<BigInt>,
        url -> Text,
        event_types -> Text,
        secret_sealed -> Text,
        previous_secret_sealed -> Nullable<Text>,
        previous_secret_until -> Nullable<Timestamp>,
        enabled -> Bool,
        disabled_reason -> Nullable<Text>,
        failing_since -> Nullable<Timestamp>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    webhook_events (id) {
        id -> BigInt,
        message_id -> Text,
        event_type -> Text,
        user_id -> BigInt,
        payload -> Text,
        once_key -> Nullable<Text>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    webhook_deliveries (id) {
        id -> BigInt,
        endpoint_id -> BigInt,
        event_id -> BigInt,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Timestamp,
        lease_until -> Nullable<Timestamp>,
        last_status -> Nullable<Integer>,
        last_error -> Nullable<Text>,
        created_at -> Timestamp,
        delivered_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    mail_notices (id) {
        id -> BigInt,
        user_id -> Nullable<BigInt>,
        developer_id -> Nullable<BigInt>,
        notice -> Text,
        once_key -> Nullable<Text>,
        attempts -> Integer,
        next_attempt_at -> Timestamp,
        lease_until -> Nullable<Timestamp>,
        last_error -> Nullable<Text>,
        done_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    enrichment_rules (id) {
        id -> BigInt,
        user_id -> BigInt,
        match_text -> Nullable<Text>,
        match_merchant -> Nullable<Text>,
        amount_min -> Nullable<Text>,
        amount_max -> Nullable<Text>,
        account_id -> Nullable<BigInt>,
        set_merchant -> Nullable<Text>,
        set_subcategory -> Nullable<Text>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    enrichment_runs (user_id) {
        user_id -> BigInt,
        account_id -> BigInt,
        after_date -> Nullable<Date>,
        after_id -> Nullable<BigInt>,
        checked -> BigInt,
        total -> BigInt,
        changed -> BigInt,
        requested_at -> Timestamp,
        advanced_at -> Timestamp,
        finished_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    enrichment_tables (id) {
        id -> Integer,
        version -> Integer,
    }
}

diesel::joinable!(webhook_deliveries -> webhook_endpoints (endpoint_id));
diesel::joinable!(webhook_deliveries -> webhook_events (event_id));
diesel::joinable!(webhook_events -> users (user_id));
diesel::joinable!(transaction_tombstones -> users (user_id));
diesel::joinable!(investment_tombstones -> users (user_id));
diesel::joinable!(mail_notices -> users (user_id));
diesel::joinable!(enrichment_rules -> users (user_id));
diesel::joinable!(enrichment_runs -> users (user_id));
diesel::joinable!(mail_notices -> developers (developer_id));
diesel::joinable!(developer_apps -> apps (app_id));
diesel::joinable!(developer_apps -> developers (developer_id));
diesel::joinable!(developer_sessions -> developers (developer_id));
diesel::joinable!(app_redirect_uris -> apps (app_id));
diesel::joinable!(users -> apps (app_id));
diesel::joinable!(api_keys -> users (user_id));
diesel::joinable!(api_key_accounts -> api_keys (api_key_id));
diesel::joinable!(api_key_accounts -> accounts (account_id));
diesel::joinable!(simplefin_destinations -> users (user_id));
diesel::joinable!(dashboard_login_links -> users (user_id));
diesel::joinable!(dashboard_sessions -> users (user_id));
diesel::joinable!(simplefin_destination_accounts -> simplefin_destinations (destination_id));
diesel::joinable!(simplefin_destination_accounts -> accounts (account_id));
diesel::joinable!(connections -> users (user_id));
diesel::joinable!(connections -> institutions (institution_id));
diesel::joinable!(accounts -> connections (connection_id));
diesel::joinable!(accounts -> users (user_id));
diesel::joinable!(transactions -> accounts (account_id));
diesel::joinable!(balances -> accounts (account_id));
diesel::joinable!(holdings -> accounts (account_id));
diesel::joinable!(holdings -> securities (security_id));
diesel::joinable!(investment_transactions -> accounts (account_id));
diesel::joinable!(investment_transactions -> securities (security_id));
diesel::joinable!(sync_jobs -> connections (connection_id));
diesel::joinable!(provider_admissions -> sync_jobs (job_id));
diesel::joinable!(mcp_grants -> apps (app_id));
diesel::joinable!(mcp_grant_accounts -> mcp_grants (grant_id));

diesel::allow_tables_to_appear_in_same_query!(
    mcp_grants,
    mcp_grant_accounts,
    enrichment_rules,
    enrichment_runs,
    enrichment_tables,
    mail_notices,
    webhook_endpoints,
    webhook_events,
    webhook_deliveries,
    transaction_tombstones,
    developers,
    developer_apps,
    developer_sessions,
    web_sessions,
    sign_in_codes,
    checkouts,
    oauth_tokens,
    oauth_codes,
    portal_sessions,
    apps,
    app_redirect_uris,
    users,
    api_keys,
    api_key_accounts,
    simplefin_destinations,
    simplefin_destination_accounts,
    dashboard_login_links,
    dashboard_sessions,
    institutions,
    connections,
    accounts,
    transactions,
    balances,
    securities,
    holdings,
    investment_transactions,
    investment_tombstones,
    sync_jobs,
    provider_admissions,
);
