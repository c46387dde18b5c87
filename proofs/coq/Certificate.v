(* Exact certificates of alpha* for concrete instances.

   A certificate lists, with every number scaled by a common denominator N so
   that it is a natural number: the target law pp (n tokens), a draft law dd
   over m draft outcomes, the drafted token set of each outcome, a coupling
   flow (m rows, n columns) and a token set S.  [check] verifies it by
   computation (vm_compute).  [cert_alpha_star] proves, for every real field R,
   that a checked certificate determines alpha*: the coupling attains v / N and
   no coupling does better, because v / N is the value of S in (star)
   (weak duality, Duality.weak_duality).  The draft outcomes may be ordered
   tuples or the draft sets themselves: alpha* depends on the draft law only
   through the law of the draft set (docs/theory.md, Lemma 2.1). *)
From mathcomp Require Import all_ssreflect all_algebra.
From OptAccept Require Import Duality.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.

Section Certificate.

Variables (n m N : nat) (pp dd : seq nat) (sets flow : seq (seq nat)).
Variables (S : seq nat) (v : nat).

Definition cflow (x y : nat) : nat := nth 0 (nth [::] flow x) y.
Definition cdraft (x y : nat) : bool := y \in nth [::] sets x.
Definition cS (y : nat) : bool := y \in S.
Definition csub (x : nat) : bool := all (fun y => y \in S) (nth [::] sets x).
Definition csum (k : nat) (F : nat -> nat) : nat := sumn [seq F i | i <- iota 0 k].

(* plain list computations, so that vm_compute decides [check] *)
Definition check : bool :=
  [&& 0 < N,
      csum n (nth 0 pp) == N,
      csum m (nth 0 dd) == N,
      all (fun x => csum n (cflow x) == nth 0 dd x) (iota 0 m)
    & all (fun y => csum m (cflow^~ y) == nth 0 pp y) (iota 0 n)] &&
  [&& csum m (fun x => csum n (fun y => if cdraft x y then cflow x y else 0)) == v,
      csum n (fun y => if cS y then nth 0 pp y else 0) + N
        == v + csum m (fun x => if csub x then nth 0 dd x else 0)
    & all (fun x => all (fun y => y < n) (nth [::] sets x)) (iota 0 m)].

Lemma csumE k (F : nat -> nat) : \sum_(i < k) F i = csum k F.
Proof. by rewrite /csum sumnE big_map -(big_mkord xpredT F) /index_iota subn0. Qed.

Lemma csumPE k (P : pred nat) (F : nat -> nat) :
  \sum_(i < k | P i) F i = csum k (fun i => if P i then F i else 0).
Proof. by rewrite big_mkcond /=; exact: (csumE k (fun i => if P i then F i else 0)). Qed.

Lemma in_iota_ord k (i : 'I_k) : (i : nat) \in iota 0 k.
Proof. by rewrite mem_iota /= ltn_ord. Qed.

(* The set law of k i.i.d. drafts from q (q = qq / Qd): D({i}) = q(i)^k and, for
   k = 2, D({i, j}) = 2 q(i) q(j).  With the sum of dd equal to N (part of [check]),
   every set of positive probability is listed. *)
Definition iid_set_ok (k Qd : nat) (qq : seq nat) : bool :=
  uniq sets && all2 (fun a d =>
    match a with
    | [:: i] => d * Qd ^ k == nth 0 qq i ^ k * N
    | [:: i; j] => [&& k == 2, i < j & d * Qd ^ 2 == 2 * nth 0 qq i * nth 0 qq j * N]
    | _ => false
    end) sets dd.

Local Open Scope ring_scope.

Variable R : realFieldType.

Definition pR (y : 'I_n) : R := (nth 0%N pp y)%:R / N%:R.
Definition DR (x : 'I_m) : R := (nth 0%N dd x)%:R / N%:R.
Definition piR (x : 'I_m) (y : 'I_n) : R := (cflow x y)%:R / N%:R.
Definition draftR (x : 'I_m) : {set 'I_n} := [set y : 'I_n | cdraft x y].
Definition SR : {set 'I_n} := [set y : 'I_n | cS y].
Definition vR : R := v%:R / N%:R.

Hypothesis ok : check.

Lemma N_neq0 : N%:R != 0 :> R.
Proof. by case/andP: ok => /and5P[N_gt0 _ _ _ _] _; rewrite pnatr_eq0 -lt0n. Qed.

Lemma sum_scaled (I : finType) (P : pred I) (F : I -> nat) :
  \sum_(i | P i) (F i)%:R / N%:R = (\sum_(i | P i) F i)%:R / N%:R :> R.
Proof. by rewrite natr_sum mulr_suml. Qed.

Lemma scaled_eq a b : (a%:R / N%:R = b%:R / N%:R :> R) <-> a = b.
Proof.
split=> [|-> //]; move/(congr1 (fun z => z * N%:R)).
by rewrite !divfK ?N_neq0 // => /eqP; rewrite eqr_nat => /eqP.
Qed.

Lemma scaled_N : N%:R / N%:R = 1 :> R.
Proof. by rewrite divff ?N_neq0. Qed.

Lemma cert_p_law : (forall y, 0 <= pR y) /\ \sum_y pR y = 1.
Proof.
case/andP: ok => /and5P[_ /eqP hp _ _ _] _; split=> [y|]; first by rewrite divr_ge0 ?ler0n.
by rewrite sum_scaled csumE hp scaled_N.
Qed.

Lemma cert_D_law : (forall x, 0 <= DR x) /\ \sum_x DR x = 1.
Proof.
case/andP: ok => /and5P[_ _ /eqP hd _ _] _; split=> [x|]; first by rewrite divr_ge0 ?ler0n.
by rewrite sum_scaled csumE hd scaled_N.
Qed.

Lemma cert_coupling : is_coupling pR DR piR.
Proof.
case/andP: ok => /and5P[_ _ _ /allP hrow /allP hcol] _.
split=> [x y|x|y]; first by rewrite divr_ge0 ?ler0n.
  by rewrite sum_scaled csumE; apply/scaled_eq/eqP/hrow/in_iota_ord.
by rewrite sum_scaled (csumE m (cflow^~ y)); apply/scaled_eq/eqP/hcol/in_iota_ord.
Qed.

Lemma cert_acceptance : acceptance draftR piR = vR.
Proof.
case/andP: ok => _ /and3P[/eqP hacc _ _].
rewrite /acceptance /vR.
have -> : v = (\sum_(x < m) \sum_(y < n | cdraft x y) cflow x y)%N.
  rewrite -hacc (csumE m (fun x => \sum_(y < n | cdraft x y) cflow x y)%N).
  by congr sumn; apply: eq_map => x; rewrite csumPE.
rewrite natr_sum mulr_suml; apply: eq_bigr => x _.
by rewrite sum_scaled; congr (_%:R / _); apply: eq_bigl => y; rewrite inE.
Qed.

Lemma csubE x : (draftR x \subset SR) = csub x.
Proof.
case/andP: ok => _ /and3P[_ _ /allP /(_ x (in_iota_ord x)) /allP hlt].
apply/subsetP/allP => [h z zin|h y].
  have zn : (z < n)%N by apply: hlt.
  by have := h (Ordinal zn); rewrite !inE /cdraft /cS /= => /(_ zin).
by rewrite !inE /cdraft /cS => /h.
Qed.

Lemma cert_cut : cut pR DR draftR SR = vR.
Proof.
case/andP: ok => _ /and3P[_ /eqP hcut _].
rewrite /cut /pmass /Dsub (eq_bigl (fun y : 'I_n => cS y)) => [|y]; last by rewrite inE.
rewrite (eq_bigl (fun x : 'I_m => csub x)) => [|x]; last by rewrite csubE.
rewrite !sum_scaled /vR.
move: hcut; rewrite -(csumPE n cS (nth 0%N pp)) -(csumPE m csub (nth 0%N dd)) => hcut.
set Sp := (\sum_(y < n | cS y) _)%N in hcut *.
set Sd := (\sum_(x < m | csub x) _)%N in hcut *.
transitivity ((Sp%:R + N%:R - Sd%:R) / N%:R : R).
  by rewrite mulrBl mulrDl scaled_N.
by congr (_ / _); apply/eqP; rewrite subr_eq -!natrD hcut.
Qed.

(* alpha* of the certified instance is v / N, in every real field. *)
Theorem cert_alpha_star :
  (exists2 pi, is_coupling pR DR pi & acceptance draftR pi = vR) /\
  (forall pi, is_coupling pR DR pi -> acceptance draftR pi <= vR).
Proof.
split; first by exists piR; [exact: cert_coupling|exact: cert_acceptance].
have [D_ge0 D_sum1] := cert_D_law.
by move=> pi hpi; rewrite -cert_cut; apply: weak_duality.
Qed.

End Certificate.

Print Assumptions cert_alpha_star.
