//! One CSV record per line, as ncu writes them: fields in double quotes
//! (a doubled quote inside is a quote), commas inside quotes kept. ncu never
//! puts a line break inside a value, so a line is a record and every error
//! can name its line.

/// The fields of `line`, or what is wrong with it.
pub(crate) fn split_record(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("a quoted field is not closed".to_string()),
                }
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => fields.push(field),
                Some(c) => {
                    return Err(format!(
                        "`{c}` after the closing quote of field {}",
                        fields.len() + 1
                    ))
                }
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field);
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some(c) => field.push(c),
                }
            }
            fields.push(field);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_commas_and_escaped_quotes() {
        assert_eq!(
            split_record(r#""0","1,234,567","a ""b"", c",plain,"#).unwrap(),
            ["0", "1,234,567", "a \"b\", c", "plain", ""]
        );
        assert_eq!(split_record("").unwrap(), [""]);
        assert!(split_record(r#""open,"x""#).is_err());
        assert!(split_record(r#""a"b,"c""#).is_err());
    }
}
