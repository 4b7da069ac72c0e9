//! `tributary rules`: a user's rules for merchants and categories, as the
//! API manages them (docs/enrichment.md, "Rules").

use crate::cli::RulesCommand;
use crate::support::{find_user, when};
use crate::terminal::shown;
use anyhow::{Context as _, bail};
use tributary_domain::clock::Clock;
use tributary_domain::enrich::rules::{Actions, Conditions, Rule};
use tributary_domain::money::parse_decimal;
use tributary_domain::taxonomy::Subcategory;
use tributary_storage::rules::{self as store, RuleRecord};
use tributary_storage::{Database, reenrich};

pub fn run(db: &Database, clock: &dyn Clock, command: RulesCommand) -> anyhow::Result<()> {
    match command {
        RulesCommand::Add {
            user,
            match_text,
            match_merchant,
            amount_min,
            amount_max,
            account,
            set_merchant,
            set_subcategory,
        } => {
            let user = find_user(db, &user)?;
            let amount = |flag: &str, text: Option<String>| {
                text.map(|t| {
                    parse_decimal(t.trim())
                        .with_context(|| format!("--{flag}: `{t}` is not a decimal number"))
                })
                .transpose()
            };
            let subcategory = set_subcategory
                .map(|id| {
                    Subcategory::from_id(&id).with_context(|| {
                        format!("--set-subcategory: `{id}` is no subcategory id (docs/enrichment.md, \"Categories\")")
                    })
                })
                .transpose()?;
            let rule = Rule {
                when: Conditions {
                    text: match_text,
                    merchant: match_merchant,
                    amount_min: amount("amount-min", amount_min)?,
                    amount_max: amount("amount-max", amount_max)?,
                    account_id: account.map(|a| a.get()),
                },
                then: Actions {
                    merchant: set_merchant,
                    subcategory,
                },
            };
            if let Err(err) = rule.check() {
                bail!("{}: {err}", flag_of(err.field()));
            }
            let conn = &mut *db.conn()?;
            let kept = store::create(conn, user.id, &rule, clock.now().naive_utc())?;
            println!("Added rule {}: {}", kept.id, described(&kept));
            println!(
                "Stored transactions follow as the workers reach them (`tributary rules list`)."
            );
        }
        RulesCommand::List { user } => {
            let user = find_user(db, &user)?;
            let conn = &mut *db.conn()?;
            let rules = store::list(conn, user.id)?;
            if rules.is_empty() {
                println!("No rules.");
            }
            for rule in &rules {
                println!("{:>5}  {}", rule.id, described(rule));
            }
            if let Some(progress) = reenrich::progress(conn, user.id)? {
                match progress.finished_at {
                    Some(at) => println!(
                        "Applied to {} stored transactions ({} changed), finished {}.",
                        progress.checked,
                        progress.changed,
                        when(Some(at))
                    ),
                    None => println!(
                        "Applying: {} of {} stored transactions read, {} changed so far.",
                        progress.checked, progress.total, progress.changed
                    ),
                }
            }
        }
        RulesCommand::Delete { user, id } => {
            let user = find_user(db, &user)?;
            let conn = &mut *db.conn()?;
            if !store::delete(conn, user.id, id, clock.now().naive_utc())? {
                bail!("no rule {id} of {}", user.email);
            }
            println!("Deleted rule {id}.");
        }
    }
    Ok(())
}

/// The option a rule's field comes from.
fn flag_of(field: &str) -> &'static str {
    match field {
        "match.text" => "--match-text",
        "match.merchant" => "--match-merchant",
        "match.amountMin" => "--amount-min",
        "set.merchant" => "--set-merchant",
        "set" => "--set-merchant or --set-subcategory",
        _ => "--match-text, --match-merchant, --amount-min, --amount-max or --account",
    }
}

/// A rule in one line, its texts made safe for a terminal.
fn described(record: &RuleRecord) -> String {
    shown(&record.rule.to_string()).into_owned()
}
