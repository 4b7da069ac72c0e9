//! The control-character rule (`crate::control_characters`,
//! docs/errors.md `CONTROL_CHARACTER`) as the documents say it: it runs
//! before every endpoint, so every operation may answer 400 with it, and
//! every plain string it takes has a `pattern` excluding what the rule
//! refuses, so that clients and fuzzers (schemathesis) know a string with
//! NUL is not a valid value.

use utoipa::openapi::schema::{Object, Schema, SchemaType, Type};
use utoipa::openapi::{OpenApi, Ref, RefOr};

/// A parameter: no C0 control character.
const ONE_LINE: &str = r"^[^\x00-\x1f]*$";
/// A body field: no C0 control character but tab, line feed and carriage
/// return.
const LINES: &str = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f]*$";

/// Adds the rule to every operation of `doc`, and to every string it
/// takes: parameters and the schemas of request bodies (not answers: an
/// error message may quote what it refuses).
pub(super) fn describe(doc: &mut OpenApi) {
    let mut requested = Vec::new();
    for operation in crate::routes::operations_in(&mut doc.paths) {
        may_refuse_control_characters(operation);
        for parameter in operation.parameters.iter_mut().flatten() {
            if let RefOr::T(parameter) = parameter
                && let Some(RefOr::T(schema)) = &mut parameter.schema
            {
                constrain(schema, ONE_LINE, &mut requested);
            }
        }
        let bodies = operation
            .request_body
            .iter_mut()
            .flat_map(|body| match body {
                RefOr::T(body) => Some(body.content.values_mut()),
                RefOr::Ref(_) => None,
            });
        for content in bodies.flatten() {
            let RefOr::T(content) = content else {
                continue;
            };
            match &mut content.schema {
                Some(RefOr::Ref(reference)) => requested.push(reference.ref_location.clone()),
                Some(RefOr::T(schema)) => constrain(schema, LINES, &mut requested),
                None => {}
            }
        }
    }
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    let mut done = Vec::new();
    while let Some(location) = requested.pop() {
        let name = location
            .trim_start_matches("#/components/schemas/")
            .to_owned();
        if done.contains(&name) {
            continue;
        }
        if let Some(RefOr::T(schema)) = components.schemas.get_mut(&name) {
            constrain(schema, LINES, &mut requested);
        }
        done.push(name);
    }
}

/// An operation that documents no 400 gets the shared answer; one that
/// does says `CONTROL_CHARACTER` is among its codes.
fn may_refuse_control_characters(operation: &mut utoipa::openapi::path::Operation) {
    match operation.responses.responses.get_mut("400") {
        None => {
            operation.responses.responses.insert(
                "400".to_owned(),
                RefOr::Ref(Ref::from_response_name("ControlCharacter")),
            );
        }
        Some(RefOr::T(response)) if !response.description.contains("CONTROL_CHARACTER") => {
            response
                .description
                .push_str(" `CONTROL_CHARACTER`: a parameter or field holds a control character.");
        }
        Some(_) => {}
    }
}

/// `pattern` on every plain string of `schema` (not one with a format, a
/// pattern or a list of values of its own) and on its objects' property
/// names, through properties and the alternatives of an optional value;
/// the schemas it refers to are added to `referred`.
fn constrain(schema: &mut Schema, pattern: &str, referred: &mut Vec<String>) {
    let nested = |item: &mut RefOr<Schema>, referred: &mut Vec<String>| match item {
        RefOr::T(item) => constrain(item, pattern, referred),
        RefOr::Ref(reference) => referred.push(reference.ref_location.clone()),
    };
    match schema {
        Schema::Object(object) => {
            let is_string = match &object.schema_type {
                SchemaType::Type(kind) => *kind == Type::String,
                SchemaType::Array(kinds) => kinds.contains(&Type::String),
                SchemaType::AnyValue => false,
            };
            if is_string
                && object.format.is_none()
                && object.pattern.is_none()
                && object.enum_values.is_none()
            {
                object.pattern = Some(pattern.to_owned());
            }
            if !object.properties.is_empty() && object.property_names.is_none() {
                let mut names = Object::with_type(Type::String);
                names.pattern = Some(ONE_LINE.to_owned());
                object.property_names = Some(Box::new(Schema::Object(names)));
            }
            for property in object.properties.values_mut() {
                nested(property, referred);
            }
        }
        Schema::OneOf(one_of) => {
            for item in &mut one_of.items {
                nested(item, referred);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::interface::Interface;

    /// Every operation may answer the refusal, and the strings say so.
    #[test]
    fn both_documents_say_the_rule() {
        for interface in [Interface::Personal, Interface::Platform] {
            let doc = serde_json::to_value(super::super::document(interface)).unwrap_or_default();
            for (path, item) in doc["paths"].as_object().into_iter().flatten() {
                for (method, operation) in item.as_object().into_iter().flatten() {
                    assert!(
                        operation["responses"]["400"].is_object(),
                        "{method} {path} lists no 400"
                    );
                }
            }
            let text = doc.to_string();
            assert!(
                text.contains(r#""pattern":"^[^\\x00-\\x1f]*$""#),
                "{interface:?}"
            );
        }
    }
}
